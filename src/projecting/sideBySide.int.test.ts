import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { event } from '../../test/support/projectionTestBed.js';
import type { RecordedEvent } from '../eventStore/eventStore.js';
import { sql } from '../platform/sql.js';
import { decodeBatch, ReplayPoisonError, type BatchTarget, type DecodedBatch } from './applyBatch.js';
import { createGeneration, loadGenerations } from './generations.js';
import { ProjectionInvariantError, type Projection } from './projection.js';
import { applyLogSideBySide } from './sideBySide.js';

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

/** A projection that records each event's position, and which batches it applied in what order. */
function recordingProjection(name: string, options: { delayMs: number; failAtSeq?: number }) {
  const applied: number[] = [];
  const projection: Projection = {
    name,
    version: 1,
    handles: ['ClinicOpened'],
    tables: [
      {
        name: 'seen',
        create: (table) => [sql.typeAlias('void')`CREATE TABLE ${table('seen')} (tenant_id text NOT NULL, seq bigint NOT NULL, PRIMARY KEY (tenant_id, seq))`],
      },
    ],
    apply: async (events, { db, table }) => {
      const first = Number(events[0]?.position.seq ?? 0);
      if (options.failAtSeq !== undefined && events.some((e) => Number(e.position.seq) === options.failAtSeq)) {
        throw new ProjectionInvariantError(`cannot apply ${options.failAtSeq}`);
      }
      await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      await db.query(sql.typeAlias('void')`
        INSERT INTO ${table('seen')} SELECT * FROM ${sql.unnest(
          events.map((e) => [e.tenantId, e.position.seq]),
          ['text', 'int8'],
        )}
      `);
      applied.push(first);
    },
  };
  return { projection, applied };
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

    await expect(run).rejects.toThrow(ReplayPoisonError);
    // Three whole batches, then the fourth one event at a time up to the event at fault.
    expect(failing.applied.slice(0, 3)).toEqual([1, 6, 11]);
    expect(Math.max(...failing.applied)).toBeLessThan(3 * batchSize + 2);
    // The other one stops within the window past the failing one instead of reading the whole log.
    expect(other.applied.length).toBeLessThanOrEqual(3 + 2);
    const appliedAfter = other.applied.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(other.applied).toHaveLength(appliedAfter);
  });
});
