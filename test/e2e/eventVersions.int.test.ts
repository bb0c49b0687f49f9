import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { allProjections } from '../../projections/index.js';
import { briefingMetricSubjects, briefingSubject } from '../../src/analytics/subjects.js';
import { maxAnalyticsCaps } from '../../src/config/analyticsCaps.js';
import { generateHistory } from '../../src/console/history/generateHistory.js';
import { seed } from '../../src/console/seed.js';
import { currentVersionOf, newEvent } from '../../src/events/index.js';
import { compareLogPositions, type EventStore } from '../../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../../src/eventStore/postgresEventStore.js';
import { sql } from '../../src/platform/sql.js';
import { startProjector } from '../../src/projecting/projector.js';
import { replayProjections } from '../../src/projecting/replay.js';
import { loadGenerations } from '../../src/projecting/generations.js';
import { formatPosition } from '../../src/projecting/logPositions.js';
import { registerProjectionMetrics } from '../../src/projecting/projectionMetrics.js';
import { projectionsReport, waitForProjections } from '../../src/projecting/status.js';
import { computeWithEvidence } from '../../src/reporting/analyticsReads.js';
import { verifyEvidenceMany } from '../../src/reporting/verifyEvidence.js';
import { runCli } from '../support/cli.js';
import { createLogger } from '../../src/platform/logger.js';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../support/databases.js';
import { consoleThatChanged } from '../support/eventVersions.js';
import { eventually } from '../support/eventually.js';
import { killReplayAt } from '../support/killedReplay.js';
import { readModelDigests } from '../support/projectionTestBed.js';

/**
 * One history written by a console that changed its events halfway: the older half in the first
 * versions of StockMovementRecorded and OrderDrafted, the rest in the current ones. Every way of
 * building the read tables over it (live, trusted, strict, resumed rebuilds) must give the tables of
 * the same history written all in the current versions (the same log, its older half rewritten in
 * place: log positions are part of the tables, so the two logs must share them), and evidence
 * minted while the log held only first versions still verifies.
 */
const params = { seed: 41, tenants: 2, days: 90, scale: 'small', asOf: '2026-11-01T00:00:00.000Z' } as const;
const caps = { ...maxAnalyticsCaps, exceptions: 50, comparison: 50, trend: 1000 };

/** The history's length: the console's generator run dry (it writes nothing). */
function historyLength(): number {
  let total = 0;
  for (const write of generateHistory(params)) total += write.events.length;
  return total;
}

/** A database of its own and the Postgres event store on it. */
async function openLog(): Promise<{ database: TestDatabase; eventStore: EventStore }> {
  const database = await createPostgresTestDatabase();
  return { database, eventStore: createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url }) };
}

const versionCount = z.object({ type: z.string(), version: z.number(), events: z.number(), witnessed: z.number() });

async function versionsOf(pool: DatabasePool) {
  return pool.any(sql.type(versionCount)`
    SELECT event_type AS type, schema_version AS version, count(*)::int AS events,
      count(*) FILTER (WHERE data ? 'secondActorId' OR data ? 'witnessId')::int AS witnessed
    FROM events WHERE event_type IN ('StockMovementRecorded', 'OrderDrafted') GROUP BY 1, 2 ORDER BY 1, 2
  `);
}

/**
 * The first versions of the log rewritten as the current console writes them (test only: the log
 * is append-only, so its trigger is set aside for this): the inverse of asFirstVersion.
 */
async function rewriteAsCurrent(pool: DatabasePool): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`ALTER TABLE events DISABLE TRIGGER events_append_only`);
    await tx.query(sql.typeAlias('void')`
      UPDATE events SET schema_version = 2,
        data = CASE WHEN data ? 'secondActorId' THEN (data - 'secondActorId') || jsonb_build_object('witnessId', data->'secondActorId') ELSE data END
      WHERE event_type = 'StockMovementRecorded' AND schema_version = 1
    `);
    await tx.query(sql.typeAlias('void')`
      UPDATE events SET schema_version = 2, data = data || jsonb_build_object('lineCount', jsonb_array_length(data->'lines'))
      WHERE event_type = 'OrderDrafted' AND schema_version = 1
    `);
    await tx.query(sql.typeAlias('void')`ALTER TABLE events ENABLE TRIGGER events_append_only`);
  });
}

describe('a log whose events changed version halfway (real Postgres)', () => {
  let database: TestDatabase | undefined;
  let eventStore: EventStore | undefined;

  beforeAll(async () => {
    ({ database, eventStore } = await openLog());
  });
  afterAll(async () => {
    await eventStore?.close();
    await database?.close();
  });

  test('live, evidence minted on the first versions verifies after the change; trusted, strict and resumed rebuilds equal the all-current tables', async () => {
    if (!database || !eventStore) throw new Error('no database');
    const { pool, url } = database;
    const total = historyLength();
    const half = Math.floor(total / 2);
    const changed = consoleThatChanged(eventStore, { firstVersionEvents: half, holdAfter: half });
    const summary = await seed({ eventStore: changed.store, params });
    const workspaceId = summary.tenants[0]?.workspaceId ?? '';

    // Live, over the first versions only; evidence minted then.
    const projector = startProjector({ pool, eventStore, projections: allProjections, logger: silentLogger, lockRetryMs: 200 });
    let digests: Record<string, Record<string, string>> = {};
    try {
      await waitForProjections(pool, eventStore, allProjections, 120);
      const subjects = [briefingSubject('weekly', params.asOf, caps), ...briefingMetricSubjects('weekly', params.asOf, caps)];
      const before = await computeWithEvidence(pool, workspaceId, params.asOf, subjects);
      // The rest of the history, written by the changed console, live.
      await changed.appendHeld();
      await waitForProjections(pool, eventStore, allProjections, 120);
      const after = await computeWithEvidence(pool, workspaceId, params.asOf, subjects);
      expect(after.checkpoint.seq).toBeGreaterThan(before.checkpoint.seq);
      const ids = [...before.computed, ...after.computed].map((c) => c.evidenceId);
      const verified = await verifyEvidenceMany(pool, eventStore, ids);
      expect(verified.filter((v) => !v.match).map((v) => ({ id: v.evidenceId, recorded: v.recorded, recomputed: v.recomputed }))).toEqual([]);
      expect(verified.length).toBe(ids.length);
    } finally {
      await projector.stop();
    }
    digests = { live: await readModelDigests(pool, allProjections) };
    expect(Number((await eventStore.head()).eventCount)).toBe(total);
    // Not vacuous: both versions of both types, witnessed movements among the first versions.
    const versions = await versionsOf(pool);
    expect(versions.map((v) => [v.type, v.version])).toEqual([
      ['OrderDrafted', 1],
      ['OrderDrafted', 2],
      ['StockMovementRecorded', 1],
      ['StockMovementRecorded', 2],
    ]);
    expect(versions.find((v) => v.type === 'StockMovementRecorded' && v.version === 1)?.witnessed).toBeGreaterThan(0);

    // The trusted rebuild, the ledger loaded by Postgres from the log (the SQL twin of the upcaster).
    const trusted = await replayProjections({ pool, eventStore, projections: allProjections, logger: silentLogger, bulkLoad: { connectionUri: url } });
    expect(trusted.projections.filter((p) => p.fromLog).map((p) => p.projection)).toEqual(['stock_movements']);
    digests = { ...digests, trusted: await readModelDigests(pool, allProjections) };
    // The same, every projection folded by Node from the trusted read (the ledger's rows by COPY).
    const throughNode = await replayProjections({ pool, eventStore, projections: allProjections, logger: silentLogger, bulkLoad: { connectionUri: url }, loadFromLog: false });
    expect(throughNode.projections.filter((p) => p.fromLog)).toEqual([]);
    digests = { ...digests, trustedThroughNode: await readModelDigests(pool, allProjections) };
    // The strict one, every event through its schema.
    await replayProjections({ pool, eventStore, projections: allProjections, logger: silentLogger, strict: true, parallelism: 1 });
    digests = { ...digests, strict: await readModelDigests(pool, allProjections) };
    // Killed where the first versions end, then resumed.
    const batch = 250;
    const left = await killReplayAt(database, eventStore, Math.floor(half / batch) - 1, batch);
    expect(left.length).toBe(allProjections.length);
    const resumed = await runCli(['projections', 'replay', '--parallel', '2', '--batch', String(batch)], { DATABASE_URL: url, LOG_LEVEL: 'warn' }, 300_000);
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = z.object({ projections: z.array(z.object({ projection: z.string(), resumed: z.boolean() })) }).parse(JSON.parse(resumed.stdout));
    expect(result.projections.filter((p) => p.resumed).map((p) => p.projection).sort()).toEqual(left.map((g) => g.projection).sort());
    digests = { ...digests, resumed: await readModelDigests(pool, allProjections) };

    // The same history all in the current versions.
    await rewriteAsCurrent(pool);
    expect((await versionsOf(pool)).map((v) => [v.type, v.version])).toEqual([
      ['OrderDrafted', 2],
      ['StockMovementRecorded', 2],
    ]);
    await replayProjections({ pool, eventStore, projections: allProjections, logger: silentLogger, bulkLoad: { connectionUri: url } });
    const expected = await readModelDigests(pool, allProjections);
    for (const [path, tables] of Object.entries(digests)) expect(tables, path).toEqual(expected);
  }, 600_000);
});

describe('events of a version newer than the reader knows (real Postgres)', () => {
  let database: TestDatabase | undefined;
  let eventStore: EventStore | undefined;
  const handlesMovements = allProjections.filter((p) => p.handles.includes('StockMovementRecorded')).map((p) => p.name);
  const handlesDrafts = allProjections.filter((p) => p.handles.includes('OrderDrafted')).map((p) => p.name);

  beforeAll(async () => {
    ({ database, eventStore } = await openLog());
    // The history, its older half written before both changes.
    await seed({ eventStore: consoleThatChanged(eventStore, { firstVersionEvents: Math.floor(historyLength() / 2) }).store, params });
  }, 120_000);
  afterAll(async () => {
    await eventStore?.close();
    await database?.close();
  });

  test('an older release holds the projections that handle a changed type; the release that reads it picks them up, without a rebuild', async () => {
    if (!database || !eventStore) throw new Error('no database');
    const { pool, url } = database;

    // A release from before both changes: it reads version 1 of every type.
    const holds: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void holds.push(line) });
    const older = startProjector({ pool, eventStore, projections: allProjections, logger, lockRetryMs: 200, knownVersions: () => 1 });
    const firstOf = async (type: string) =>
      pool.one(sql.type(z.object({ tx: z.string(), seq: z.bigint() }))`
        SELECT transaction_id::text AS tx, global_position AS seq FROM events WHERE event_type = ${type} AND schema_version = 2
        ORDER BY transaction_id, global_position LIMIT 1
      `);
    const [movement, draft] = [await firstOf('StockMovementRecorded'), await firstOf('OrderDrafted')];
    try {
      // Those that handle a changed type hold (and say so), those that handle neither reach the head.
      const holding = [...new Set([...handlesMovements, ...handlesDrafts])].sort();
      await eventually(() => {
        const said = holds.map((line) => z.object({ projection: z.string(), msg: z.string() }).parse(JSON.parse(line)));
        expect(said.every((s) => s.msg.startsWith('projection holds'))).toBe(true);
        expect([...new Set(said.map((s) => s.projection))].sort()).toEqual(holding);
      }, { timeoutMs: 60_000 });
      await eventually(async () => {
        const head = await eventStore?.head();
        for (const generation of await loadGenerations(pool, ['active'])) {
          if (!holding.includes(generation.projection)) expect(generation.checkpoint, generation.projection).toEqual(head?.position);
        }
      }, { timeoutMs: 60_000 });
      // Each holds right before the first event it handles of version 2.
      const held = await loadGenerations(pool, ['active']);
      for (const generation of held.filter((g) => holding.includes(g.projection))) {
        const stops = [handlesMovements.includes(generation.projection) ? movement : undefined, handlesDrafts.includes(generation.projection) ? draft : undefined]
          .filter((stop) => stop !== undefined)
          .map((stop) => ({ tx: BigInt(stop.tx), seq: stop.seq }))
          .sort(compareLogPositions);
        const next = (await eventStore.readAll(generation.checkpoint, 1)).events[0];
        expect(next?.position, generation.projection).toEqual(stops[0]);
      }
      // Held, not skipped: nothing is dead-lettered, and the checkpoints stay where they are.
      expect(await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM projection_dead_letters`)).toBe(0);
      await sleep(1000);
      expect((await loadGenerations(pool, ['active'])).map((g) => g.checkpoint)).toEqual(held.map((g) => g.checkpoint));
    } finally {
      await older.stop();
    }
    const generations = (await loadGenerations(pool, ['active'])).map((g) => [g.projection, g.generation]);

    // The release that reads version 2: the same generations go on to the head.
    const current = startProjector({ pool, eventStore, projections: allProjections, logger: silentLogger, lockRetryMs: 200 });
    try {
      await waitForProjections(pool, eventStore, allProjections, 120);
    } finally {
      await current.stop();
    }
    expect((await loadGenerations(pool, ['active'])).map((g) => [g.projection, g.generation])).toEqual(generations);
    const live = await readModelDigests(pool, allProjections);
    await replayProjections({ pool, eventStore, projections: allProjections, logger: silentLogger, bulkLoad: { connectionUri: url } });
    expect(await readModelDigests(pool, allProjections)).toEqual(live);
  }, 300_000);

  test('status and supply_projection_held name the event a projection holds at, and nothing after it is applied', async () => {
    if (!database || !eventStore) throw new Error('no database');
    const { pool } = database;
    await replayProjections({ pool, eventStore, projections: allProjections, logger: silentLogger });
    const workspaceId = (await pool.oneFirst(sql.type(z.object({ id: z.string() }))`SELECT tenant_id AS id FROM events ORDER BY global_position LIMIT 1`));
    const movement = newEvent(
      'StockMovementRecorded',
      { movementId: 'mov_from_the_future', type: 'adjust', boxId: 'box_future', catalogItemId: 'itm_future', quantityDelta: 1, actorId: 'mem_future', occurredAt: params.asOf },
      { eventId: randomUUID(), tenantId: workspaceId, occurredAt: params.asOf },
    );
    const future = { ...movement, schemaVersion: currentVersionOf('StockMovementRecorded') + 1 };
    const { position } = await eventStore.append(`supply.box-${workspaceId}.box_future`, [future], 'any');
    // A movement this release reads, after it: the projections that hold do not get to it.
    const after = newEvent('StockMovementRecorded', { ...movement.data, movementId: 'mov_after' }, { eventId: randomUUID(), tenantId: workspaceId, occurredAt: params.asOf });
    await eventStore.append(`supply.box-${workspaceId}.box_future`, [after], 'any');

    const projector = startProjector({ pool, eventStore, projections: allProjections, logger: silentLogger, lockRetryMs: 200 });
    try {
      const registry = new Registry();
      registerProjectionMetrics(registry, () => projectionsReport(pool, eventStore as EventStore, allProjections));
      await eventually(async () => {
        const report = await projectionsReport(pool, eventStore as EventStore, allProjections);
        const heldBy = report.projections.filter((p) => p.held !== undefined);
        expect(heldBy.map((p) => p.projection).sort()).toEqual([...handlesMovements].sort());
        for (const p of heldBy) {
          expect(p.held).toEqual({ position: formatPosition(position), eventId: future.eventId, eventType: 'StockMovementRecorded', schemaVersion: future.schemaVersion, knownVersion: future.schemaVersion - 1 });
          expect(p.lagEvents).toBe(2);
        }
        expect(report.projections.filter((p) => p.held === undefined).every((p) => p.lagEvents === 0)).toBe(true);
        const metrics = await registry.getSingleMetricAsString('supply_projection_held');
        expect(metrics).toContain('supply_projection_held{projection="stock_movements"} 1');
        expect(metrics).toContain('supply_projection_held{projection="tenants"} 0');
      }, { timeoutMs: 60_000 });
      expect(await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM projection_dead_letters`)).toBe(0);
    } finally {
      await projector.stop();
    }
  }, 300_000);
});
