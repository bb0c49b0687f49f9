import { AsyncResource } from 'node:async_hooks';
import type { DatabasePool } from 'slonik';
import { logStart, type EventStore, type LogPosition, type ReadAllResult } from '../eventStore/eventStore.js';
import type { Logger } from '../platform/logger.js';
import { sql } from '../platform/sql.js';
import { applyBatchInTransaction, decodeBatch, type BatchTarget, type DecodedBatch } from './applyBatch.js';
import {
  analyzeGeneration,
  createDeferredIndexes,
  createGeneration,
  dropGenerationSchema,
  ensureActiveGenerations,
  loadGenerations,
  lockActiveGenerations,
  pointViews,
  setGenerationState,
} from './generations.js';
import { minimumCheckpoint } from './logPositions.js';
import type { Projection } from './projection.js';
import { withProjectionLocks } from './projectionLocks.js';

export type ReplayProgress = { readonly seen: number; readonly total: number };

export type ReplayOptions = {
  readonly pool: DatabasePool;
  readonly eventStore: EventStore;
  readonly projections: readonly Projection[];
  readonly logger: Logger;
  readonly batchSize?: number;
  readonly onProgress?: (progress: ReplayProgress) => void;
  /** Stops the replay between batches; its generation is dropped and the live one stays. */
  readonly signal?: AbortSignal;
};

export type ReplayResult = {
  readonly events: number;
  readonly seconds: number;
  readonly projections: readonly { readonly projection: string; readonly generation: number; readonly eventsApplied: number; readonly replaced: number }[];
};

export class ReplayBusyError extends Error {
  constructor(projections: readonly string[]) {
    super(`a replay of ${projections.join(', ')} is already running`);
    this.name = 'ReplayBusyError';
  }
}

/**
 * Rebuilds projections without taking them offline: a new generation of their tables is built
 * beside the live one from the start of the log, in large batches; once it has caught up, one
 * transaction locks the live checkpoints (a running projector waits), applies what arrived
 * meanwhile, points the read_models views at the new tables and drops the old ones. Readers see
 * the old data until that commit and the new data after it. An event a projection cannot apply
 * stops the replay; the live generation is left as it was.
 */
export async function replayProjections(options: ReplayOptions): Promise<ReplayResult> {
  const { pool, eventStore, projections, logger } = options;
  const batchSize = options.batchSize ?? 5000;
  const names = projections.map((p) => p.name);
  const started = performance.now();

  return withProjectionLocks(
    pool,
    async (locks) => {
      const taken = await locks.tryAcquire(names);
      if (taken.length !== names.length) throw new ReplayBusyError(names.filter((name) => !taken.includes(name)));
      await ensureActiveGenerations(pool, projections);
      await abandonUnfinishedBuilds(pool, names, logger);

      let targets: BatchTarget[] = [];
      for (const projection of projections) {
        const generation = await pool.transaction((tx) => createGeneration(tx, projection, 'building'));
        targets.push({ projection, generation });
      }
      logger.info({ projections: targets.map((t) => `${t.projection.name}#${t.generation.generation}`) }, 'replay building');

      let reading: Promise<ReadAllResult & { readonly decodedBatch: DecodedBatch }> | undefined;
      const readAndDecode = async (from: LogPosition) => {
        const result = await eventStore.readAll(from, batchSize);
        return { ...result, decodedBatch: decodeBatch(result.events) };
      };
      try {
        const total = Number((await eventStore.head()).eventCount);
        let seen = 0;
        options.onProgress?.({ seen, total });
        // Reading the next batch overlaps with writing this one.
        reading = readAndDecode(logStart);
        for (;;) {
          options.signal?.throwIfAborted();
          const batch = await reading;
          if (batch.events.length > 0 && !batch.atHead) reading = readAndDecode(batch.next);
          if (batch.events.length > 0) {
            const current = targets;
            const result = await pool.transaction(async (tx) => {
              // A crash loses the newest batches together with their checkpoint (the transaction
              // stays atomic), and this generation is not read yet: no need to wait for the disk.
              await tx.query(sql.typeAlias('void')`SET LOCAL synchronous_commit TO off`);
              return applyBatchInTransaction(tx, current, batch.decodedBatch, 'replay', logger);
            });
            targets = [...result.targets];
            seen += batch.events.length;
            options.onProgress?.({ seen, total: Math.max(total, seen) });
          }
          if (batch.atHead || batch.events.length === 0) break;
        }

        for (const target of targets) {
          options.signal?.throwIfAborted();
          await pool.transaction((tx) => createDeferredIndexes(tx, target.projection, target.generation.schemaName));
          await analyzeGeneration(pool, target.projection, target.generation.schemaName);
        }

        // While the switch transaction holds the locks it reads the log itself when the log is in
        // the same database; otherwise on the store's own connection, outside the transaction's
        // async context (which slonik would otherwise refuse).
        const logReader = new AsyncResource('replay-log-reader');
        const replaced = await pool.transaction(async (tx) => {
          const live = await lockActiveGenerations(tx, names);
          for (;;) {
            const from = minimumCheckpoint(targets.map((t) => t.generation.checkpoint));
            const batch = eventStore.readAllOn
              ? await eventStore.readAllOn(tx, from, batchSize)
              : await logReader.runInAsyncScope(() => eventStore.readAll(from, batchSize));
            if (batch.events.length > 0) {
              targets = [...(await applyBatchInTransaction(tx, targets, batch.events, 'replay', logger)).targets];
              seen += batch.events.length;
            }
            if (batch.atHead) break;
          }
          for (const target of targets) {
            const old = live.find((g) => g.projection === target.projection.name);
            // The views depend on the old tables: repoint them first, then the old schema can go.
            await pointViews(tx, target.projection, target.generation.schemaName);
            if (old) {
              await setGenerationState(tx, old, 'retired');
              await dropGenerationSchema(tx, old.schemaName);
            }
            await setGenerationState(tx, target.generation, 'active');
          }
          return live;
        });
        options.onProgress?.({ seen, total: Math.max(total, seen) });
        const result: ReplayResult = {
          events: seen,
          seconds: (performance.now() - started) / 1000,
          projections: targets.map((t) => ({
            projection: t.projection.name,
            generation: t.generation.generation,
            eventsApplied: Number(t.generation.eventsApplied),
            replaced: replaced.find((g) => g.projection === t.projection.name)?.generation ?? 0,
          })),
        };
        logger.info(result, 'replay switched readers to the new generation');
        return result;
      } catch (error) {
        void reading?.catch(() => undefined);
        const reason = error instanceof Error ? error.message : String(error);
        for (const target of targets) {
          await pool
            .transaction(async (tx) => {
              await dropGenerationSchema(tx, target.generation.schemaName);
              await setGenerationState(tx, target.generation, 'failed', reason);
            })
            .catch((cleanupError: unknown) => logger.error({ err: cleanupError }, 'could not clean up a failed replay generation'));
        }
        throw error;
      }
    },
    'replay',
  );
}

/** Generations left 'building' by a replay that died: nobody holds their replay lock any more. */
async function abandonUnfinishedBuilds(pool: DatabasePool, names: readonly string[], logger: Logger): Promise<void> {
  const building = (await loadGenerations(pool, ['building'])).filter((g) => names.includes(g.projection));
  for (const generation of building) {
    logger.warn({ projection: generation.projection, generation: generation.generation }, 'dropping a generation an earlier replay left unfinished');
    await pool.transaction(async (tx) => {
      await dropGenerationSchema(tx, generation.schemaName);
      await setGenerationState(tx, generation, 'failed', 'abandoned: the replay that built it did not finish');
    });
  }
}
