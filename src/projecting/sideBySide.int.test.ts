import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { event } from '../../test/support/projectionTestBed.js';
import { pace } from '../../test/support/pace.js';
import type { RecordedEvent } from '../eventStore/eventStore.js';
import { sql } from '../platform/sql.js';
import { decodeBatch, ReplayPoisonError, type BatchTarget, type DecodedBatch } from './applyBatch.js';
import { createGeneration, loadGenerations } from './generations.js';
import { ProjectionInvariantError, type Folding, type Projection, type ProjectedEvent, type ProjectionContext } from './projection.js';
import { applyLogSideBySide, FoldedBatchesError } from './sideBySide.js';

const batches = 12;
const batchSize = 5;

/** A log of clinic openings, cut into batches (seq 1, 2, …). */
function log(): RecordedEvent[][] {
  const cut: RecordedEvent[][] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    cut.push(
      Array.from({ length: batchSize }, (_, index) => {
        const seq = batch * batchSize + index + 1;
        const e = event('ClinicOpened', { clinicId: `cli_${seq}`, name: `Clinic ${seq}`, status: 'active' });
        return { ...e, position: { tx: 1n, seq: BigInt(seq) }, streamName: `supply.clinic-${e.tenantId}`, streamRevision: 0n, recordedAt: e.occurredAt };
      }),
    );
  }
  return cut;
}

/** The one table of the test projections: the positions they applied. */
const seenTables: Projection['tables'] = [
  {
    name: 'seen',
    create: (table) => [sql.typeAlias('void')`CREATE TABLE ${table('seen')} (tenant_id text NOT NULL, seq bigint NOT NULL, PRIMARY KEY (tenant_id, seq))`],
  },
];

/** A fold that applies each write's events as one batch. */
function applying(apply: (events: readonly ProjectedEvent[], context: ProjectionContext) => Promise<void>): Folding {
  return {
    begin: async () => {
      const folded: ProjectedEvent[] = [];
      return {
        fold: async (events) => {
          folded.push(...events);
        },
        write: (context) => apply(folded, context),
      };
    },
  };
}

/** A projection that records each event's position, and which batches it applied in what order. */
function recordingProjection(name: string, options: { delayMs: number; failAtSeq?: number }) {
  const applied: number[] = [];
  let inFlight = 0;
  const projection: Projection = {
    name,
    version: 1,
    handles: ['ClinicOpened'],
    tables: seenTables,
    fold: applying(async (events, { db, table }) => {
      const first = Number(events[0]?.position.seq ?? 0);
      if (options.failAtSeq !== undefined && events.some((e) => Number(e.position.seq) === options.failAtSeq)) {
        throw new ProjectionInvariantError(`cannot apply ${options.failAtSeq}`);
      }
      inFlight += 1;
      try {
        await pace(options.delayMs); // a slow apply
        await db.query(sql.typeAlias('void')`
          INSERT INTO ${table('seen')} SELECT * FROM ${sql.unnest(
            events.map((e) => [e.tenantId, e.position.seq]),
            ['text', 'int8'],
          )}
        `);
        applied.push(first);
      } finally {
        inFlight -= 1;
      }
    }),
  };
  /** Applies started and not yet ended. */
  return { projection, applied, inFlight: () => inFlight };
}

/** A folding projection that records the positions of each write, and fails the write that holds `failAtSeq`. */
function foldingProjection(name: string, options: { failAtSeq?: number } = {}) {
  const writes: number[][] = [];
  const folding: Folding = {
    begin: async () => {
      const folded: { tenantId: string; seq: bigint }[] = [];
      return {
        fold: async (events) => {
          for (const e of events) folded.push({ tenantId: e.tenantId, seq: e.position.seq });
        },
        write: async ({ db, table }) => {
          if (options.failAtSeq !== undefined && folded.some((f) => Number(f.seq) === options.failAtSeq)) throw new ProjectionInvariantError(`cannot write ${options.failAtSeq}`);
          await db.query(sql.typeAlias('void')`
            INSERT INTO ${table('seen')} SELECT * FROM ${sql.unnest(
              folded.map((f) => [f.tenantId, f.seq]),
              ['text', 'int8'],
            )}
          `);
          writes.push(folded.map((f) => Number(f.seq)));
        },
      };
    },
  };
  const projection: Projection = {
    name,
    version: 1,
    handles: ['ClinicOpened'],
    tables: seenTables,
    fold: folding,
  };
  return { projection, writes };
}

describe('applyLogSideBySide', () => {
  let database: TestDatabase | undefined;
  const pool = () => {
    if (!database) throw new Error('no database');
    return database.pool;
  };

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  const targetsOf = async (projections: readonly Projection[]): Promise<BatchTarget[]> => {
    const targets: BatchTarget[] = [];
    for (const projection of projections) targets.push({ projection, generation: await pool().transaction((tx) => createGeneration(tx, projection, 'building')) });
    return targets;
  };

  /** The log as `next` hands it out, with how far reading ever got ahead of the slowest projection. */
  const reader = (slowest: () => number) => {
    const cut = log();
    let read = 0;
    let furthestAhead = 0;
    return {
      next: async (): Promise<DecodedBatch | undefined> => {
        const batch = cut[read];
        if (batch === undefined) return undefined;
        read += 1;
        furthestAhead = Math.max(furthestAhead, read - slowest());
        return decodeBatch(batch);
      },
      furthestAhead: () => furthestAhead,
    };
  };

  test('every projection applies every batch in log order, with its checkpoint, reading at most `ahead` batches past the slowest', async () => {
    const slow = recordingProjection('side_slow', { delayMs: 20 });
    const fast = recordingProjection('side_fast', { delayMs: 0 });
    const log = reader(() => Math.min(slow.applied.length, fast.applied.length));
    const result = await applyLogSideBySide({
      pool: pool(),
      targets: await targetsOf([slow.projection, fast.projection]),
      parallelism: 2,
      ahead: 2,
      next: log.next,
      logger: silentLogger,
    });

    const firsts = Array.from({ length: batches }, (_, batch) => batch * batchSize + 1);
    expect(slow.applied).toEqual(firsts);
    expect(fast.applied).toEqual(firsts);
    expect(result.events).toBe(batches * batchSize);
    expect(log.furthestAhead()).toBeLessThanOrEqual(2);
    for (const name of ['side_slow', 'side_fast']) {
      const rows = await pool().oneFirst(sql.type(z.object({ rows: z.bigint() }))`SELECT count(*) AS rows FROM ${sql.identifier([`rm_${name}_g1`, 'seen'])}`);
      expect(rows, name).toBe(BigInt(batches * batchSize));
    }
    const generations = (await loadGenerations(pool(), ['building'])).filter((g) => g.projection.startsWith('side_'));
    expect(generations.map((g) => g.checkpoint.seq)).toEqual([BigInt(batches * batchSize), BigInt(batches * batchSize)]);
    expect(result.targets.map((t) => t.generation.checkpoint.seq)).toEqual([BigInt(batches * batchSize), BigInt(batches * batchSize)]);
  });

  test('an event a projection cannot apply stops every projection, and is thrown once all have stopped', async () => {
    const failing = recordingProjection('stop_failing', { delayMs: 5, failAtSeq: 3 * batchSize + 2 });
    const other = recordingProjection('stop_other', { delayMs: 0 });
    const log = reader(() => Math.min(failing.applied.length, other.applied.length));
    const run = applyLogSideBySide({
      pool: pool(),
      targets: await targetsOf([failing.projection, other.projection]),
      parallelism: 2,
      ahead: 2,
      next: log.next,
      logger: silentLogger,
    });

    // What was under way when the run failed: the promise is settled only once every lane has stopped.
    const whenThrown = run.then(
      () => 'resolved',
      () => ({ inFlight: [failing.inFlight(), other.inFlight()] }),
    );
    await expect(run).rejects.toThrow(ReplayPoisonError);
    expect(await whenThrown).toEqual({ inFlight: [0, 0] });
    // Three whole batches, then the fourth one event at a time up to the event at fault.
    expect(failing.applied.slice(0, 3)).toEqual([1, 6, 11]);
    expect(Math.max(...failing.applied)).toBeLessThan(3 * batchSize + 2);
    // The other one stops within the window past the failing one instead of reading the whole log.
    expect(other.applied.length).toBeLessThanOrEqual(3 + 2);
  });

  test('with foldEvents, every projection folds batches and writes them together, every foldEvents events, the lanes staggered', async () => {
    const first = foldingProjection('fold_first');
    const second = foldingProjection('fold_second');
    const log = reader(() => 0);
    const result = await applyLogSideBySide({
      pool: pool(),
      targets: await targetsOf([first.projection, second.projection]),
      parallelism: 2,
      ahead: 2,
      next: log.next,
      logger: silentLogger,
      foldEvents: 4 * batchSize,
    });

    const all = Array.from({ length: batches * batchSize }, (_, index) => index + 1);
    for (const { writes } of [first, second]) {
      // Every event once, in log order, in writes of whole batches.
      expect(writes.flat()).toEqual(all);
      for (const write of writes) expect(write.length % batchSize).toBe(0);
    }
    // Staggered: the first lane writes after half the interval, the second after all of it; then every interval.
    expect(first.writes.map((w) => w.length)).toEqual([2, 4, 4, 2].map((n) => n * batchSize));
    expect(second.writes.map((w) => w.length)).toEqual([4, 4, 4].map((n) => n * batchSize));
    const generations = (await loadGenerations(pool(), ['building'])).filter((g) => g.projection.startsWith('fold_'));
    expect(generations.map((g) => [g.projection, g.checkpoint.seq, g.eventsApplied])).toEqual(
      ['fold_first', 'fold_second'].map((name) => [name, BigInt(batches * batchSize), BigInt(batches * batchSize)]),
    );
    expect(result.targets.map((t) => t.generation.checkpoint.seq)).toEqual([1, 2].map(() => BigInt(batches * batchSize)));
  });

  test('a folded write that fails throws FoldedBatchesError; the writes before it committed with their checkpoints, nothing of it did', async () => {
    const failing = foldingProjection('foldfail_failing', { failAtSeq: 7 * batchSize });
    const log = reader(() => 0);
    const run = applyLogSideBySide({
      pool: pool(),
      targets: await targetsOf([failing.projection]),
      parallelism: 2,
      ahead: 2,
      next: log.next,
      logger: silentLogger,
      foldEvents: 3 * batchSize,
    });

    await expect(run).rejects.toThrow(FoldedBatchesError);
    await expect(run).rejects.toThrow(/foldfail_failing.*cannot write 35/);
    // Two writes of three batches committed; the third (batches 7 to 9) did not.
    expect(failing.writes.map((w) => w.length)).toEqual([3 * batchSize, 3 * batchSize]);
    const [generation] = (await loadGenerations(pool(), ['building'])).filter((g) => g.projection === 'foldfail_failing');
    expect(generation?.checkpoint.seq).toBe(BigInt(6 * batchSize));
    const rows = await pool().oneFirst(sql.type(z.object({ rows: z.bigint() }))`SELECT count(*) AS rows FROM ${sql.identifier([generation?.schemaName ?? '', 'seen'])}`);
    expect(rows).toBe(BigInt(6 * batchSize));
  });
});
