import { randomUUID } from 'node:crypto';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { newEvent, type EventData, type EventEnvelope, type EventType } from '../../src/events/index.js';
import type { RecordedEvent } from '../../src/eventStore/eventStore.js';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import { sql } from '../../src/platform/sql.js';
import { applyBatchInTransaction, type BatchTarget, type DeadLetter } from '../../src/projecting/applyBatch.js';
import { createDeferredIndexes, createGeneration, ensureActiveGenerations, loadGenerations, readModelSchema } from '../../src/projecting/generations.js';
import { RebuildMemory, type Projection } from '../../src/projecting/projection.js';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from './databases.js';

export const testTenant = 'tenant-a';
export const otherTenant = 'tenant-b';

/** Builds a catalogue event for a test (data checked against its schema). */
export function event<T extends EventType>(
  type: T,
  data: EventData<T>,
  options: { tenantId?: string; occurredAt?: string } = {},
): EventEnvelope {
  return newEvent(type, data, {
    eventId: randomUUID(),
    tenantId: options.tenantId ?? testTenant,
    occurredAt: options.occurredAt ?? '2026-11-01T09:00:00.000Z',
  });
}

/** An event as the store would return it, with data that need not match its schema (poison tests). */
export function rawEvent(type: string, data: unknown, tenantId = testTenant): Omit<RecordedEvent, 'position' | 'streamRevision'> {
  return {
    streamName: `supply.test-${tenantId}`,
    eventId: randomUUID(),
    type,
    schemaVersion: 1,
    tenantId,
    occurredAt: '2026-11-01T09:00:00.000Z',
    recordedAt: '2026-11-01T09:00:00.000Z',
    data,
  };
}

export type ProjectionTestBed = {
  readonly pool: DatabasePool;
  /**
   * Projects events into the active generation, in batches of `batchSize` (all at once by
   * default), in live mode. Returns the dead letters.
   */
  project(events: readonly (EventEnvelope | Omit<RecordedEvent, 'position' | 'streamRevision'>)[], options?: { batchSize?: number }): Promise<DeadLetter[]>;
  /**
   * Projects every event given so far into a fresh generation one event per batch and returns
   * whether each table's digest equals the active generation's. With `rebuild`, the fresh
   * generation is built as a replay builds it: each projection keeps its RebuildMemory from batch
   * to batch.
   */
  oneByOneDigestsMatch(options?: { rebuild?: boolean }): Promise<{ table: string; batched: string; oneByOne: string }[]>;
  close(): Promise<void>;
};

/** A migrated Postgres database with these projections' first generation, for given/when/then tests. */
export async function createProjectionTestBed(projections: readonly Projection[]): Promise<ProjectionTestBed> {
  const database: TestDatabase = await createPostgresTestDatabase();
  const { pool } = database;
  await ensureActiveGenerations(pool, projections);
  const history: RecordedEvent[] = [];
  let seq = 0n;

  const toRecorded = (item: EventEnvelope | Omit<RecordedEvent, 'position' | 'streamRevision'>): RecordedEvent => {
    seq += 1n;
    if ('recordedAt' in item) return { ...item, position: { tx: 1n, seq }, streamRevision: 0n };
    return {
      position: { tx: 1n, seq },
      streamName: `supply.test-${item.tenantId}`,
      streamRevision: 0n,
      eventId: item.eventId,
      type: item.type,
      schemaVersion: item.schemaVersion,
      tenantId: item.tenantId,
      occurredAt: item.occurredAt,
      recordedAt: item.occurredAt,
      data: item.data,
    };
  };

  const applyAll = async (
    targets: BatchTarget[],
    events: readonly RecordedEvent[],
    batchSize: number,
    logger: Logger = silentLogger,
    afterBatch: (deadLetters: readonly DeadLetter[]) => void = () => {},
  ): Promise<{ targets: BatchTarget[]; letters: DeadLetter[] }> => {
    const letters: DeadLetter[] = [];
    let current = targets;
    for (let start = 0; start < events.length; start += batchSize) {
      const batch = events.slice(start, start + batchSize);
      const result = await pool.transaction((tx) => {
        for (const target of current) target.rebuild?.begin();
        return applyBatchInTransaction(tx, current, batch, 'live', logger);
      });
      for (const target of current) target.rebuild?.committed();
      current = [...result.targets];
      letters.push(...result.deadLetters);
      afterBatch(result.deadLetters);
    }
    return { targets: current, letters };
  };

  const activeTargets = async (): Promise<BatchTarget[]> => {
    const generations = await loadGenerations(pool, ['active']);
    return projections.map((projection) => {
      const generation = generations.find((g) => g.projection === projection.name);
      if (!generation) throw new Error(`no active generation of ${projection.name}`);
      return { projection, generation };
    });
  };

  return {
    pool,
    project: async (events, options = {}) => {
      const recorded = events.map(toRecorded);
      history.push(...recorded);
      const { letters } = await applyAll(await activeTargets(), recorded, options.batchSize ?? Math.max(1, recorded.length));
      return letters;
    },
    oneByOneDigestsMatch: async (options = {}) => {
      const active = await activeTargets();
      const fresh: BatchTarget[] = [];
      for (const projection of projections) {
        const generation = await pool.transaction(async (tx) => {
          const created = await createGeneration(tx, projection, 'building');
          // Applied event by event like a live generation, so with every key from the start.
          await createDeferredIndexes(tx, projection, created.schemaName);
          return created;
        });
        fresh.push(options.rebuild === true ? { projection, generation, rebuild: new RebuildMemory() } : { projection, generation });
      }
      // A batch (here one event) that fails is retried with its rebuild memory forgotten (rows read
      // from the tables), and only an event that fails again is dead-lettered: the digests would
      // match while the memory went wrong, so a failed batch without a dead letter is an error here.
      let failures: string[] = [];
      const logger = createLogger('warn', { write: (line: string) => void failures.push(line) });
      await applyAll(fresh, history, 1, logger, (deadLetters) => {
        const failed = failures.filter((line) => line.includes('batch could not be applied'));
        if (failed.length > 0 && deadLetters.length === 0) throw new Error(`an event failed, then passed on its own: ${failed.join('')}`);
        failures = [];
      });
      const rows: { table: string; batched: string; oneByOne: string }[] = [];
      for (const [index, target] of active.entries()) {
        const other = fresh[index];
        if (!other) continue;
        for (const table of target.projection.tables) {
          rows.push({
            table: table.name,
            batched: await tableDigest(pool, target.generation.schemaName, table.name),
            oneByOne: await tableDigest(pool, other.generation.schemaName, table.name),
          });
        }
      }
      return rows;
    },
    close: () => database.close(),
  };
}

/** md5 over every row of a table, in a fixed order: equal digests mean equal contents. */
export async function tableDigest(db: CommonQueryMethods, schemaName: string, table: string): Promise<string> {
  return db.oneFirst(sql.type(z.object({ digest: z.string() }))`
    SELECT md5(coalesce(string_agg(t::text, E'\n' ORDER BY t::text COLLATE "C"), '')) AS digest
    FROM ${sql.identifier([schemaName, table])} AS t
  `);
}

/** Digests of every read_models view (what readers see), by table name. */
export async function readModelDigests(db: CommonQueryMethods, projections: readonly Projection[]): Promise<Record<string, string>> {
  const digests: Record<string, string> = {};
  for (const projection of projections) {
    for (const table of projection.tables) digests[table.name] = await tableDigest(db, readModelSchema, table.name);
  }
  return digests;
}
