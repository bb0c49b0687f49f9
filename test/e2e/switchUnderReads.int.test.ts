import pg from 'pg';
import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { allProjections } from '../../projections/index.js';
import { eventually } from '../../src/eventStore/eventStoreContractHelpers.js';
import { sql } from '../../src/platform/sql.js';
import { loadGenerations } from '../../src/projecting/generations.js';
import type { Projection } from '../../src/projecting/projection.js';
import { replayProjections, type ReplayResult } from '../../src/projecting/replay.js';
import { waitForProjections } from '../../src/projecting/status.js';
import type { ApiTestBed } from '../support/apiTestBed.js';
import { useApiBed } from '../support/useApiBed.js';
import { capturingLogger } from '../support/capturingLogger.js';
import { silentLogger } from '../support/databases.js';
import { services } from '../support/services.js';

/** One /v1 request of a read loop: what it asked, how it ended, and when (performance.now()). */
type Read = { readonly path: string; readonly status: number; readonly started: number; readonly ended: number; readonly detail?: string };

/**
 * `clients` HTTP clients, each reading its path again as soon as its last answer came, through the
 * bed's server (the reads `serve` makes: cached principal, guarded prepared statements), until
 * `stop()`.
 */
function readLoop(bed: ApiTestBed, requests: readonly { readonly path: string; readonly key: string }[], clients: number) {
  const reads: Read[] = [];
  let running = true;
  const loops = Array.from({ length: clients }, async (_, client) => {
    const { path, key } = requests[client % requests.length] ?? { path: '', key: '' };
    while (running) reads.push(await timedRead(bed, path, key));
  });
  return {
    reads,
    stop: async (): Promise<readonly Read[]> => {
      running = false;
      await Promise.all(loops);
      return reads;
    },
  };
}

async function timedRead(bed: ApiTestBed, path: string, key: string): Promise<Read> {
  const started = performance.now();
  try {
    const answer = await bed.request(path, { key });
    return { path, status: answer.status, started, ended: performance.now(), ...(answer.status === 200 ? {} : { detail: answer.text.slice(0, 300) }) };
  } catch (error) {
    return { path, status: 0, started, ended: performance.now(), detail: error instanceof Error ? error.message : String(error) };
  }
}

/** A session of the test's own, whose transaction holds locks while the test decides. */
async function session(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

type LockRow = { pid: number; relation: string; mode: string; granted: boolean };

/** The relation locks of the database, by backend, naming each relation. */
async function relationLocks(bed: ApiTestBed): Promise<readonly LockRow[]> {
  return bed.database.pool.any(sql.type(z.object({ pid: z.number(), relation: z.string(), mode: z.string(), granted: z.boolean() }))`
    SELECT l.pid, l.relation::regclass::text AS relation, l.mode, l.granted
    FROM pg_locks AS l
    WHERE l.locktype = 'relation' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND l.pid <> pg_backend_pid()
  `);
}

const readPaths = ['/v1/orders?limit=20', '/v1/inventory/balances?limit=20'];
const named = (...names: string[]): Projection[] => allProjections.filter((p) => names.includes(p.name));

describe.runIf(services.postgres)('blue/green switches under /v1 reads (real Postgres, the server serve composes)', () => {
  let bed: ApiTestBed;
  let key: string;
  let requests: { path: string; key: string }[];
  const given = useApiBed({ scopes: ['orders:read', 'inventory:read'], bed: { tenants: 1 }, bootTimeoutMs: 240_000 });
  beforeAll(async () => {
    ({ bed, key } = given);
    requests = readPaths.map((path) => ({ path, key }));
    // Given the data each read needs (a page of orders, of balances), read once so that the key's
    // principal is cached and every later read is the guarded prepared statement.
    for (const { path } of requests) {
      const answer = await bed.request(path, { key });
      expect(answer.status).toBe(200);
      expect((answer.body as { data: unknown[] }).data.length).toBeGreaterThan(0);
    }
  });

  test('many switches of the read models a guarded read takes (tenants, boxes, orders) under a read loop: every read answers 200', async () => {
    const loop = readLoop(bed, requests, 6);
    const switches = 8;
    try {
      for (let round = 0; round < switches; round += 1) {
        await replayProjections({ pool: bed.database.pool, eventStore: bed.eventStore, projections: named('tenants', 'boxes', 'orders'), logger: silentLogger });
      }
    } finally {
      await loop.stop();
    }
    expect(loop.reads.filter((read) => read.status !== 200)).toEqual([]);
    expect(loop.reads.length).toBeGreaterThan(switches * 2);
  }, 600_000);

  test('a guarded read that holds the orders view and then wants the tenants view while a switch of both runs: the read answers 200 and the switch commits', async () => {
    // A guarded read of orders takes the orders view, then api_keys and the guard's tenants and
    // members views. Two sessions of the test stop each side where the other can cross it: one
    // holds api_keys (the read stops after the orders view), one reads the old tenants table (a
    // switch that repointed the tenants views first stops at dropping it). The read is let go first,
    // so that if the two cross, the read is the one that waited first: the one Postgres aborts.
    const oldTenants = (await loadGenerations(bed.database.pool, ['active'])).find((g) => g.projection === 'tenants');
    if (oldTenants === undefined) throw new Error('no active tenants generation');
    const keys = await session(bed.database.url);
    const tables = await session(bed.database.url);
    let replay: Promise<ReplayResult> | undefined;
    try {
      await keys.query('BEGIN');
      await keys.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
      await tables.query('BEGIN');
      await tables.query(`SELECT 1 FROM ${tables.escapeIdentifier(oldTenants.schemaName)}.tenants LIMIT 1`);
      const holders = new Set([(await keys.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid, (await tables.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid]);
      let settled = false;
      const read = timedRead(bed, '/v1/orders?limit=20', key).finally(() => (settled = true));
      let readerPid = 0;
      await eventually(async () => {
        readerPid = (await relationLocks(bed)).find((l) => l.relation === 'api_keys' && !l.granted)?.pid ?? 0;
        return readerPid !== 0;
      }, 30_000);
      expect((await relationLocks(bed)).filter((l) => l.pid === readerPid && l.granted).map((l) => l.relation)).toContain('read_models.orders');

      replay = replayProjections({ pool: bed.database.pool, eventStore: bed.eventStore, projections: named('tenants', 'orders'), logger: silentLogger });
      replay.catch(() => undefined);
      // The switch waits: for the orders view (the read holds it) or for the old tenants table.
      await eventually(async () => (await relationLocks(bed)).some((l) => !l.granted && l.pid !== readerPid && !holders.has(l.pid)), 120_000);
      await keys.query('ROLLBACK');
      // The read ends, or waits for the switch (for the tenants view it took; or, when a catalogue
      // change made it plan again and let go of what it held, for a view the switch took meanwhile).
      await eventually(async () => settled || (await relationLocks(bed)).some((l) => l.pid === readerPid && !l.granted && l.relation !== 'api_keys'), 30_000);
      await tables.query('ROLLBACK');

      expect(await read).toMatchObject({ status: 200 });
      await expect(replay).resolves.toMatchObject({ projections: expect.any(Array) });
    } finally {
      await keys.end();
      await tables.end();
      await replay?.catch(() => undefined);
    }
  }, 240_000);

  test('a transaction holding the view a switch takes last, then wanting one it took: the switch gives way, both finish', async () => {
    // Several reads in one transaction (an export's snapshot) take views in an order of their own:
    // here members (which the switch takes last), then orders (which it takes first).
    const { logger, lines } = capturingLogger();
    const reader = await session(bed.database.url);
    let replay: Promise<ReplayResult> | undefined;
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT 1 FROM read_models.members LIMIT 1');
      replay = replayProjections({ pool: bed.database.pool, eventStore: bed.eventStore, projections: named('tenants', 'orders'), logger });
      replay.catch(() => undefined);
      await eventually(async () => (await relationLocks(bed)).some((l) => l.relation === 'read_models.members' && l.mode === 'AccessExclusiveLock' && !l.granted), 120_000);
      const rows = await reader.query('SELECT count(*)::int AS n FROM read_models.orders');
      expect(rows.rows[0]).toMatchObject({ n: expect.any(Number) });
      await reader.query('COMMIT');
      await expect(replay).resolves.toMatchObject({ projections: expect.any(Array) });
      expect(lines.some((line) => line.msg === 'switch: readers hold the views; trying again')).toBe(true);
    } finally {
      await reader.end();
      await replay?.catch(() => undefined);
    }
  }, 240_000);

  test.each([
    ['the same definitions', false],
    ['a version bump of orders and boxes', true],
  ])('reads of orders and balances during a replay of %s: every read answers 200, and one started before the switch committed and ended after it', async (_, bump) => {
    const projections = named('boxes', 'orders').map((p) => (bump ? { ...p, version: p.version + 1 } : p));
    const oldOrders = (await loadGenerations(bed.database.pool, ['active'])).find((g) => g.projection === 'orders');
    if (oldOrders === undefined) throw new Error('no active orders generation');
    const loop = readLoop(bed, requests, 6);
    // A session reading the old orders table directly keeps the switch from dropping it: the switch
    // then holds every view it repointed until this session lets go, and reads queue behind it.
    const holder = await session(bed.database.url);
    let replay: Promise<ReplayResult> | undefined;
    let result: ReplayResult | undefined;
    let observedAt = 0;
    let observedUntil = 0;
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${holder.escapeIdentifier(oldOrders.schemaName)}.orders LIMIT 1`);
      replay = replayProjections({ pool: bed.database.pool, eventStore: bed.eventStore, projections, logger: silentLogger });
      replay.catch(() => undefined);
      await eventually(async () => {
        const sent = performance.now();
        const locks = await relationLocks(bed);
        const switchPid = locks.find((l) => l.relation === 'read_models.orders' && l.mode === 'AccessExclusiveLock' && l.granted)?.pid;
        const holdsBoth = switchPid !== undefined && locks.some((l) => l.pid === switchPid && l.relation === 'read_models.boxes' && l.mode === 'AccessExclusiveLock' && l.granted);
        const readsWaiting = locks.some((l) => ['read_models.orders', 'read_models.boxes'].includes(l.relation) && !l.granted && l.pid !== switchPid);
        if (!holdsBoth || !readsWaiting) return false;
        observedAt = sent;
        observedUntil = performance.now();
        return true;
      }, 120_000);
      await holder.query('ROLLBACK');
      result = await replay;
      if (bump) {
        // And back to the definitions the service runs: a second change of version, under the same reads.
        await replayProjections({ pool: bed.database.pool, eventStore: bed.eventStore, projections: named('boxes', 'orders'), logger: silentLogger });
        await waitForProjections(bed.database.pool, bed.eventStore, allProjections, 60);
      }
    } finally {
      await holder.end();
      await replay?.catch(() => undefined);
      await loop.stop();
    }
    expect(result?.projections.map((p) => p.projection).sort()).toEqual(['boxes', 'orders']);
    expect(loop.reads.filter((read) => read.status !== 200)).toEqual([]);
    // While the switch had not committed (it held the views at `observedAt`), a read was waiting for
    // its lock: that read started before the commit and could only end after it.
    expect(loop.reads.some((read) => read.started < observedAt && read.ended > observedUntil)).toBe(true);
  }, 600_000);
});
