import { pino } from 'pino';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { DatabasePool } from 'slonik';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { allProjections } from '../../projections/index.js';
import { seed } from '../../src/console/seed.js';
import { newEvent, type EventEnvelope } from '../../src/events/index.js';
import { compareLogPositions, type EventStore, type LogPosition, type StreamAllOptions } from '../../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../../src/eventStore/postgresEventStore.js';
import { sql } from '../../src/platform/sql.js';
import { ReplayDecodeError, ReplayPoisonError } from '../../src/projecting/applyBatch.js';
import { createGeneration, deferredIndexStatements, dropGenerationSchema, loadGenerations, missingDeferredIndexes, setGenerationState } from '../../src/projecting/generations.js';
import { replayProjections, type ReplayOptions } from '../../src/projecting/replay.js';
import { runCli } from '../support/cli.js';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../support/databases.js';
import { buildingGenerations, killReplayAt } from '../support/killedReplay.js';
import { readModelDigests } from '../support/projectionTestBed.js';
import { eventually } from '../support/eventually.js';
import { seededRandom } from '../support/seededRandom.js';

const asOf = '2026-11-01T00:00:00.000Z';

type Seeded = { database: TestDatabase; eventStore: EventStore };

async function openSeeded(scale: 'small' | 'medium'): Promise<Seeded & { workspaceId: string }> {
  const database = await createPostgresTestDatabase();
  const eventStore = createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url });
  const summary = await seed({ eventStore, params: { seed: 23, tenants: 1, days: 60, scale, asOf } });
  const workspaceId = summary.tenants[0]?.workspaceId;
  if (workspaceId === undefined) throw new Error('the seed gave no tenant');
  return { database, eventStore, workspaceId };
}

async function closeSeeded(seeded: Seeded | undefined): Promise<void> {
  await seeded?.eventStore.close();
  await seeded?.database.close();
}

/** Indexes of each projection's active generation. */
async function indexCounts(pool: DatabasePool) {
  return pool.any(sql.type(z.object({ projection: z.string(), indexes: z.number() }))`
    SELECT g.projection, (SELECT count(*)::int FROM pg_indexes AS i WHERE i.schemaname = g.schema_name) AS indexes
    FROM projection_generations AS g WHERE g.state = 'active' ORDER BY g.projection
  `);
}

async function schemaExists(pool: DatabasePool, schemaName: string): Promise<boolean> {
  return pool.oneFirst(sql.type(z.object({ exists: z.boolean() }))`
    SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = ${schemaName}) AS exists
  `);
}

describe('replays of a medium seed (real Postgres)', () => {
  let seeded: Seeded | undefined;
  let built: Promise<Record<string, string>> | undefined;
  // What every replay must build: the first test to ask runs a trusted replay (each test can run alone,
  // in any order), which also leaves live generations for the tests that kill a rebuild.
  const reference = (): Promise<Record<string, string>> =>
    (built ??= (async () => {
      if (!seeded) throw new Error('no database');
      await replayProjections({ pool: seeded.database.pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger, parallelism: 3, bulkLoad: { connectionUri: seeded.database.url } });
      return readModelDigests(seeded.database.pool, allProjections);
    })());
  beforeAll(async () => {
    seeded = await openSeeded('medium');
  }, 300_000);
  afterAll(async () => closeSeeded(seeded));

  test('the trusted fast path, side by side, and the strict path one at a time build identical read tables', async () => {
    if (!seeded) throw new Error('no database');
    const { pool } = seeded.database;
    const fast = await replayProjections({
      pool,
      eventStore: seeded.eventStore,
      projections: allProjections,
      logger: silentLogger,
      parallelism: 3,
      bulkLoad: { connectionUri: seeded.database.url },
    });
    const fastDigests = await readModelDigests(pool, allProjections);
    const strict = await replayProjections({ pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger, strict: true, parallelism: 1 });
    const strictDigests = await readModelDigests(pool, allProjections);

    expect(fast.events).toBeGreaterThan(50_000);
    expect(strict.events).toBe(fast.events);
    // The ledger was loaded by Postgres from the log on the fast path, through Node on the strict one.
    const fromLog = (result: typeof fast) => result.projections.filter((p) => p.fromLog).map((p) => p.projection);
    expect(fromLog(fast)).toEqual(['stock_movements']);
    expect(fromLog(strict)).toEqual([]);
    expect(strictDigests).toEqual(fastDigests);
    // Not vacuous: every table holds rows (an empty table has the digest of the empty string).
    const emptyDigest = 'd41d8cd98f00b204e9800998ecf8427e';
    expect(Object.entries(fastDigests).filter(([, digest]) => digest === emptyDigest)).toEqual([]);
    built ??= Promise.resolve(fastDigests);

    // The rebuilt tables were analysed before readers saw them: the columns queries filter, join or
    // sort on have statistics; those they only return (outputOnlyColumns) have none.
    const analysed = await pool.anyFirst(sql.type(z.object({ column: z.string() }))`
      SELECT s.tablename || '.' || s.attname AS column FROM pg_stats AS s JOIN projection_generations AS g ON g.schema_name = s.schemaname
      WHERE g.state = 'active' AND s.tablename IN ('orders', 'order_lines', 'fulfillments', 'boxes', 'stock_movements')
    `);
    for (const column of ['orders.status', 'orders.creation_seq', 'order_lines.order_id', 'fulfillments.status', 'boxes.warehouse_id', 'stock_movements.box_id', 'stock_movements.occurred_at']) {
      expect(analysed).toContain(column);
    }
    for (const column of ['orders.approval_plan', 'orders.item_json', 'order_lines.name', 'fulfillments.delivery', 'boxes.balance_json', 'stock_movements.idempotency_key']) {
      expect(analysed).not.toContain(column);
    }
  }, 600_000);

  test('folding many batches before each write builds the same read tables as applying each batch on its own', async () => {
    if (!seeded) throw new Error('no database');
    const expected = await reference();
    const { pool, url } = seeded.database;
    const common = { pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger, parallelism: 3, bulkLoad: { connectionUri: url } };
    // Batch by batch, then folds of 7 batches of 1 000: rows that change across many writes (balances, levels, orders).
    const eachBatch = await replayProjections({ ...common, foldEvents: 0 });
    expect(await readModelDigests(pool, allProjections)).toEqual(expected);
    const folded = await replayProjections({ ...common, batchSize: 1000, foldEvents: 7000 });
    expect(await readModelDigests(pool, allProjections)).toEqual(expected);
    expect(folded.events).toBe(eachBatch.events);
    expect(folded.events).toBeGreaterThan(10 * 7000);
  }, 600_000);

  test('a rebuild of projections that read no stock movement streams only their types\' data, and builds the same tables', async () => {
    if (!seeded) throw new Error('no database');
    const expected = await reference();
    const { pool, url } = seeded.database;
    const { eventStore } = seeded;
    const streamAll = eventStore.streamAll?.bind(eventStore);
    if (streamAll === undefined) throw new Error('no stream');
    const asked: (readonly string[] | undefined)[] = [];
    const lean: (boolean | undefined)[] = [];
    // The store as it is, its stream watched.
    const watched: EventStore = Object.assign(Object.create(eventStore) as EventStore, {
      streamAll: (from: LogPosition, batchSize: number, options?: StreamAllOptions) => {
        asked.push(options?.dataOf);
        lean.push(options?.lean);
        return streamAll(from, batchSize, options);
      },
    });
    const projections = allProjections.filter((p) => !p.handles.includes('StockMovementRecorded'));
    expect(projections.map((p) => p.name)).toEqual(expect.arrayContaining(['orders', 'fulfillments', 'catalog']));
    const result = await replayProjections({ pool, eventStore: watched, projections, logger: silentLogger, parallelism: 3, bulkLoad: { connectionUri: url } });
    expect(asked).toHaveLength(1);
    expect(new Set(asked[0])).toEqual(new Set(projections.flatMap((p) => p.handles)));
    const tables = projections.flatMap((p) => p.tables.map((t) => t.name));
    expect(await readModelDigests(pool, projections)).toEqual(Object.fromEntries(tables.map((table) => [table, expected[table]])));
    expect(result.events).toBe(Number((await eventStore.head()).eventCount));
    // Every projection: every type's data (no list), as before.
    asked.length = 0;
    await replayProjections({ pool, eventStore: watched, projections: allProjections, logger: silentLogger, parallelism: 3, bulkLoad: { connectionUri: url } });
    expect(asked).toEqual([undefined]);
    expect(await readModelDigests(pool, allProjections)).toEqual(expected);
    // The trusted path reads the log lean (no stream name, revision or event id); the strict one whole.
    expect(lean).toEqual([true, true]);
    lean.length = 0;
    await replayProjections({ pool, eventStore: watched, projections, logger: silentLogger, parallelism: 3, strict: true });
    expect(lean).toEqual([false]);
    expect(await readModelDigests(pool, projections)).toEqual(Object.fromEntries(tables.map((table) => [table, expected[table]])));
  }, 600_000);

  const replayedResult = z.object({
    events: z.number(),
    resumedAtEvents: z.number(),
    projections: z.array(z.object({ projection: z.string(), generation: z.number(), resumed: z.boolean() })),
  });

  test('a rebuild SIGKILLed at a random batch leaves the live tables serving, and run again it resumes from its last commit and ends identical', async () => {
    if (!seeded) throw new Error('no database');
    const expected = await reference();
    const { pool, url } = seeded.database;
    const batch = 2000;
    const total = Number((await seeded.eventStore.head()).eventCount);
    const batches = Math.ceil(total / batch);
    // Somewhere from the fourth batch (a write is committed) to four fifths of the log.
    const killAt = 4 + seededRandom().below(Math.max(1, Math.floor(batches * 0.8) - 4));
    const before = (await loadGenerations(pool, ['active'])).map((g) => g.generation);
    const indexesBefore = await indexCounts(pool);

    const left = await killReplayAt(seeded.database, seeded.eventStore, killAt, batch);
    // Killed mid-load: its generations are left building, the live ones are as they were.
    expect(left.length).toBe(allProjections.length);
    expect((await loadGenerations(pool, ['active'])).map((g) => g.generation)).toEqual(before);
    expect(await readModelDigests(pool, allProjections)).toEqual(expected);
    // As if the kill had come during the index builds after the load: the boxes generation has its deferred indexes.
    const boxes = allProjections.find((p) => p.name === 'boxes');
    const boxesLeft = (await loadGenerations(pool, ['building'])).find((g) => g.projection === 'boxes');
    if (boxes === undefined || boxesLeft === undefined) throw new Error('no boxes generation left building');
    for (const statement of deferredIndexStatements(boxes, boxesLeft.schemaName)) await pool.query(statement);

    const resumed = await runCli(['projections', 'replay', '--parallel', '2', '--batch', String(batch)], { DATABASE_URL: url, DATA_DIR: os.tmpdir(), LOG_LEVEL: 'warn' }, 300_000);
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = replayedResult.parse(JSON.parse(resumed.stdout));
    expect(await readModelDigests(pool, allProjections)).toEqual(expected);
    // The generations the killed run left are the ones that switched, each resumed where it stood.
    for (const generation of left) {
      expect(result.projections.find((p) => p.projection === generation.projection)).toEqual({ projection: generation.projection, generation: generation.generation, resumed: true });
    }
    expect(result.events).toBe(total);
    // Node's fold resumes from the slowest of the generations it folds; a generation Postgres loads
    // from the log by itself resumes from its own last chunk (BulkLoader.loadFromLog).
    const foldedByNode = left.filter((g) => allProjections.find((p) => p.name === g.projection)?.fold.rows?.fromLog === undefined);
    expect(foldedByNode.length).toBeGreaterThan(0);
    const slowest = foldedByNode.reduce((min, g) => (g.seen < min ? g.seen : min), BigInt(total));
    expect(result.resumedAtEvents).toBe(Number(slowest));
    expect((await loadGenerations(pool, ['failed'])).filter((g) => left.some((l) => l.projection === g.projection && l.generation === g.generation))).toEqual([]);
    // The deferred indexes are there once each, even those the killed run had built already.
    expect(await indexCounts(pool)).toEqual(indexesBefore);
  }, 600_000);

  test('--fresh drops what a killed rebuild left and starts over', async () => {
    if (!seeded) throw new Error('no database');
    const expected = await reference();
    const { pool, url } = seeded.database;
    const batch = 2000;
    const left = await killReplayAt(seeded.database, seeded.eventStore, 6, batch);
    expect(left.length).toBe(allProjections.length);

    const fresh = await runCli(['projections', 'replay', '--fresh', '--parallel', '2', '--batch', String(batch)], { DATABASE_URL: url, DATA_DIR: os.tmpdir(), LOG_LEVEL: 'warn' }, 300_000);
    expect(fresh.code, fresh.stderr).toBe(0);
    const result = replayedResult.parse(JSON.parse(fresh.stdout));
    expect(result.resumedAtEvents).toBe(0);
    expect(result.projections.every((p) => !p.resumed)).toBe(true);
    expect(await readModelDigests(pool, allProjections)).toEqual(expected);
    const failed = await loadGenerations(pool, ['failed']);
    for (const generation of left) {
      const row = failed.find((g) => g.projection === generation.projection && g.generation === generation.generation);
      expect(row?.error).toMatch(/abandoned: a fresh replay started over/);
      expect(await schemaExists(pool, row?.schemaName ?? '')).toBe(false);
    }
  }, 600_000);

  test('a generation built for an older definition of its projection is not resumed', async () => {
    if (!seeded) throw new Error('no database');
    const expected = await reference();
    const { pool, url } = seeded.database;
    const left = await killReplayAt(seeded.database, seeded.eventStore, 4, 2000);
    const tenants = left.find((g) => g.projection === 'tenants');
    if (tenants === undefined) throw new Error('no tenants generation left building');
    await pool.query(sql.typeAlias('void')`
      UPDATE projection_generations SET definition_version = definition_version - 1 WHERE projection = 'tenants' AND generation = ${tenants.generation}
    `);
    const result = await replayProjections({ pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger, parallelism: 2, bulkLoad: { connectionUri: url } });
    expect(result.projections.find((p) => p.projection === 'tenants')).toMatchObject({ resumed: false });
    expect(result.projections.filter((p) => p.resumed).map((p) => p.projection).sort()).toEqual(left.map((g) => g.projection).filter((name) => name !== 'tenants').sort());
    expect(await readModelDigests(pool, allProjections)).toEqual(expected);
  }, 600_000);

  test('missingDeferredIndexes: the deferred indexes a generation does not have yet, whatever they were named', async () => {
    if (!seeded) throw new Error('no database');
    const { pool } = seeded.database;
    const boxes = allProjections.find((p) => p.name === 'boxes');
    if (boxes === undefined) throw new Error('no boxes projection');
    const generation = await pool.transaction((tx) => createGeneration(tx, boxes, 'building'));
    try {
      const all = deferredIndexStatements(boxes, generation.schemaName);
      expect(all.length).toBeGreaterThanOrEqual(2);
      expect(await missingDeferredIndexes(pool, boxes, generation.schemaName)).toEqual(all);
      // The last, as the killed replay had built it (its name is the one Postgres chose).
      await pool.query(all.at(-1) ?? sql.typeAlias('void')`SELECT`);
      expect(await missingDeferredIndexes(pool, boxes, generation.schemaName)).toEqual(all.slice(0, -1));
      for (const statement of all.slice(0, -1)) await pool.query(statement);
      expect(await missingDeferredIndexes(pool, boxes, generation.schemaName)).toEqual([]);
      expect(await schemaExists(pool, `${generation.schemaName}_probe`)).toBe(false);
    } finally {
      await pool.transaction(async (tx) => {
        await dropGenerationSchema(tx, generation.schemaName);
        await setGenerationState(tx, generation, 'failed', 'test');
      });
    }
  }, 60_000);
});

describe('the trusted fast path never skips an event it cannot read (small seed)', () => {
  let seeded: (Seeded & { workspaceId: string }) | undefined;
  // Each case poisons its log for good: a database each.
  beforeEach(async () => {
    seeded = await openSeeded('small');
  }, 120_000);
  afterEach(async () => closeSeeded(seeded));

  async function appendRaw(event: EventEnvelope): Promise<LogPosition> {
    if (!seeded) throw new Error('no database');
    const { position } = await seeded.eventStore.append(`supply.clinic-${seeded.workspaceId}.cli_odd`, [event], 'any');
    // Readers stop below the oldest transaction open on the server: wait until it is readable.
    const { eventStore } = seeded;
    await eventually(async () => expect(compareLogPositions((await eventStore.head()).position, position)).toBeGreaterThanOrEqual(0));
    return position;
  }

  async function expectStopsAt(position: LogPosition, eventId: string, reason: RegExp): Promise<void> {
    if (!seeded) throw new Error('no database');
    const { pool } = seeded.database;
    const live = await readModelDigests(pool, allProjections);
    const replay = replayProjections({ pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger });
    await expect(replay).rejects.toThrow(ReplayDecodeError);
    await expect(replay).rejects.toThrow(`log position ${position.tx}/${position.seq}`);
    await expect(replay).rejects.toThrow(eventId);
    await expect(replay).rejects.toThrow(reason);
    expect(await buildingGenerations(pool)).toEqual([]);
    expect(await readModelDigests(pool, allProjections)).toEqual(live);
  }

  test('an unknown event type stops it with the event position; the strict path skips it as live projectors do', async () => {
    if (!seeded) throw new Error('no database');
    const { pool } = seeded.database;
    await replayProjections({ pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger });
    const eventId = randomUUID();
    const unknown = { eventId, tenantId: seeded.workspaceId, occurredAt: asOf, schemaVersion: 1, type: 'ClinicRepainted', data: { colour: 'teal' } };
    const position = await appendRaw(unknown as unknown as EventEnvelope);
    await expectStopsAt(position, eventId, /unknown event type/);
    const strict = await replayProjections({ pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger, strict: true });
    expect(strict.events).toBe(Number((await seeded.eventStore.head()).eventCount));
  }, 180_000);

  /**
   * After a clean rebuild, appends a status change of a box that was never registered (well formed,
   * but the boxes and analytics folds cannot apply it); the replay `options` give must stop at it,
   * by its class, position and id, and leave nothing building and the live tables as they were.
   */
  async function expectPoisonedBoxNamed(options: Omit<ReplayOptions, 'pool' | 'eventStore' | 'logger'>): Promise<void> {
    if (!seeded) throw new Error('no database');
    const { pool } = seeded.database;
    await replayProjections({ pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger });
    const live = await readModelDigests(pool, allProjections);
    const eventId = randomUUID();
    const poison = newEvent('BoxStatusChanged', { boxId: 'box_never_registered', status: 'quarantined' }, { eventId, tenantId: seeded.workspaceId, occurredAt: asOf });
    const position = await appendRaw(poison);
    const replay = replayProjections({ pool, eventStore: seeded.eventStore, logger: silentLogger, ...options });
    await expect(replay).rejects.toThrow(ReplayPoisonError);
    await expect(replay).rejects.toThrow(`${position.tx}/${position.seq}`);
    await expect(replay).rejects.toThrow(eventId);
    expect(await buildingGenerations(pool)).toEqual([]);
    expect(await readModelDigests(pool, allProjections)).toEqual(live);
  }

  test('an event a folding projection cannot apply stops the replay with the event named (found again batch by batch)', async () => {
    if (!seeded) throw new Error('no database');
    // Small batches: the search batch by batch then isolates the event within 500 events, not 5 000.
    await expectPoisonedBoxNamed({ projections: allProjections, parallelism: 3, batchSize: 500, bulkLoad: { connectionUri: seeded.database.url } });
  }, 180_000);

  /**
   * Events the ledger's load from the log (BulkLoader.loadFromLog) must not take as they are: a
   * movement at a later schema version or whose data is not an object (refused by its INSERT's own
   * scan), and an event of a type this code does not know (refused by a scan of its own when no
   * projection reads the log through Node; otherwise Node's decode meets it).
   */
  const unreadable = [
    { what: 'a movement at a later schema version', schemaVersion: 3, data: undefined, type: undefined, reason: /schema version 3 is newer than 2/ },
    { what: 'a movement whose data is not an object', schemaVersion: 1, data: ['mov_in_a_list'], type: undefined, reason: /not a JSON object/ },
    { what: 'an event of a type this code does not know', schemaVersion: 1, data: undefined, type: 'LedgerRepainted', reason: /unknown event type/ },
  ] as const;

  for (const anomaly of unreadable) {
    test(`${anomaly.what}: the ledger's load from the log refuses it, and the replay through Node names it, alone or beside the others`, async () => {
      if (!seeded) throw new Error('no database');
      const { pool, url } = seeded.database;
      await replayProjections({ pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger });
      const live = await readModelDigests(pool, allProjections);
      const eventId = randomUUID();
      const movement = newEvent(
        'StockMovementRecorded',
        { movementId: 'mov_unreadable', type: 'consume', boxId: 'box_any', catalogItemId: 'itm_any', quantityDelta: -1, actorId: 'mem_any', occurredAt: asOf },
        { eventId, tenantId: seeded.workspaceId, occurredAt: asOf },
      );
      const position = await appendRaw({
        ...movement,
        schemaVersion: anomaly.schemaVersion,
        ...(anomaly.data === undefined ? {} : { data: anomaly.data }),
        ...(anomaly.type === undefined ? {} : { type: anomaly.type }),
      } as unknown as EventEnvelope);
      const ledger = allProjections.filter((p) => p.name === 'stock_movements');
      for (const projections of [ledger, allProjections]) {
        const warnings: string[] = [];
        const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
        const replay = replayProjections({ pool, eventStore: seeded.eventStore, projections, logger, parallelism: 3, bulkLoad: { connectionUri: url } });
        await expect(replay).rejects.toThrow(ReplayDecodeError);
        await expect(replay).rejects.toThrow(`log position ${position.tx}/${position.seq}`);
        await expect(replay).rejects.toThrow(eventId);
        await expect(replay).rejects.toThrow(anomaly.reason);
        // The ledger alone: no projection reads the log through Node and meets the event first.
        if (projections === ledger) expect(warnings.join('')).toContain('could not be loaded from the log by Postgres');
        expect(await buildingGenerations(pool)).toEqual([]);
        expect(await readModelDigests(pool, allProjections)).toEqual(live);
      }
    }, 180_000);
  }

  test('data no projection of the replay reads is not checked, as on the strict path: a broken movement stops a rebuild of the boxes, not one of the orders', async () => {
    if (!seeded) throw new Error('no database');
    const { pool, url } = seeded.database;
    const eventId = randomUUID();
    const movement = newEvent(
      'StockMovementRecorded',
      { movementId: 'mov_listed', type: 'consume', boxId: 'box_any', catalogItemId: 'itm_any', quantityDelta: -1, actorId: 'mem_any', occurredAt: asOf },
      { eventId, tenantId: seeded.workspaceId, occurredAt: asOf },
    );
    const position = await appendRaw({ ...movement, data: ['mov_in_a_list'] } as unknown as EventEnvelope);
    const named = (name: string) => allProjections.filter((p) => p.name === name);
    const common = { pool, eventStore: seeded.eventStore, logger: silentLogger, parallelism: 3, bulkLoad: { connectionUri: url } };
    const boxes = replayProjections({ ...common, projections: named('boxes') });
    await expect(boxes).rejects.toThrow(ReplayDecodeError);
    await expect(boxes).rejects.toThrow(`log position ${position.tx}/${position.seq}`);
    await expect(boxes).rejects.toThrow(/not a JSON object/);
    const trusted = await replayProjections({ ...common, projections: named('orders') });
    const digests = await readModelDigests(pool, named('orders'));
    const strict = await replayProjections({ ...common, projections: named('orders'), strict: true });
    expect(strict.events).toBe(trusted.events);
    expect(await readModelDigests(pool, named('orders'))).toEqual(digests);
  }, 180_000);

  test('a schema version this code does not read stops it with the event position', async () => {
    if (!seeded) throw new Error('no database');
    await replayProjections({ pool: seeded.database.pool, eventStore: seeded.eventStore, projections: allProjections, logger: silentLogger });
    const eventId = randomUUID();
    const event = newEvent('ClinicRenamed', { clinicId: 'cli_odd', name: 'Later' }, { eventId, tenantId: seeded.workspaceId, occurredAt: asOf });
    const position = await appendRaw({ ...event, schemaVersion: 2 });
    await expectStopsAt(position, eventId, /schema version 2/);
  }, 180_000);
});
