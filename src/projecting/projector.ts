import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import type { EventStore } from '../eventStore/eventStore.js';
import type { BulkLoadOptions } from './bulkLoad.js';
import type { Logger } from '../platform/logger.js';
import { awaitLeasedStandbys } from '../platform/readLeases.js';
import { currentVersionOf, type KnownVersions } from '../events/index.js';
import { applyBatchInTransaction, decodeBatch, type BatchTarget, type DeadLetter } from './applyBatch.js';
import { CheckpointConflictError, ensureActiveGenerations, loadGenerations } from './generations.js';
import { formatPosition, minimumCheckpoint } from './logPositions.js';
import type { Projection } from './projection.js';
import { withProjectionLocks } from './projectionLocks.js';
import { replayProjections } from './replay.js';

/** What the projector tells its observers (metrics). */
export type ProjectorObserver = {
  applied(projection: string, events: number): void;
  deadLettered(letter: DeadLetter): void;
};

export type ProjectorOptions = {
  readonly pool: DatabasePool;
  readonly eventStore: EventStore;
  readonly projections: readonly Projection[];
  readonly logger: Logger;
  readonly observer?: ProjectorObserver;
  /** Largest batch: catch-up reads this many events per transaction; live batches are what arrived. */
  readonly batchSize?: number;
  /** How often a standby tries to take the locks it does not hold. */
  readonly lockRetryMs?: number;
  /** Rebuilds of changed projections load insert-only tables with COPY (real Postgres; see ReplayOptions). */
  readonly bulkLoad?: BulkLoadOptions;
  /**
   * The newest schema version of each event type it reads: this code's (the default), or, to see
   * what an older release does with a log a newer console wrote, that release's. A projection
   * holds before an event it handles of a newer version (docs/operators.md, "Deploying a change to
   * an event"): it is neither applied nor dead-lettered, and a release that reads it picks it up.
   */
  readonly knownVersions?: KnownVersions;
};

export type Projector = {
  /** Stops after the running batch; resolves when stopped. */
  stop(): Promise<void>;
  readonly stopped: Promise<void>;
};

/**
 * Keeps the active generation of every projection whose lock this process holds up to date with
 * the log: catch-up in large batches, then live. Each batch is one transaction with the
 * checkpoints. Without a lock it stands by and retries. After a checkpoint conflict (another
 * projector, or a replay that switched generations) it reloads the checkpoints and goes on.
 */
export function startProjector(options: ProjectorOptions): Projector {
  const { pool, eventStore, projections, logger } = options;
  const batchSize = options.batchSize ?? 2000;
  const knownVersions = options.knownVersions ?? currentVersionOf;
  const lockRetryMs = options.lockRetryMs ?? 1000;
  const stopping = new AbortController();

  const runRounds = async (): Promise<void> =>
    withProjectionLocks(pool, async (locks, lost) => {
      const signal = AbortSignal.any([stopping.signal, lost]);
      const wanted = projections.map((p) => p.name);
      const taken = await locks.tryAcquire(wanted);
      if (taken.length > 0) logger.info({ projections: taken }, 'projector is active');
      let restartRound: (() => void) | undefined;
      while (!signal.aborted) {
        const mine = projections.filter((p) => locks.held.has(p.name));
        if (mine.length === 0) {
          await sleep(lockRetryMs, undefined, { signal }).catch(() => undefined);
          const more = await locks.tryAcquire(wanted);
          if (more.length > 0) logger.info({ projections: more }, 'projector took over');
          continue;
        }
        await ensureActiveGenerations(pool, mine);
        const generations = await loadGenerations(pool, ['active']);
        const targets: BatchTarget[] = [];
        for (const projection of mine) {
          const generation = generations.find((g) => g.projection === projection.name);
          if (!generation) continue;
          if (generation.definitionVersion !== projection.version) {
            rebuildOutdated(projection, generation.definitionVersion, () => restartRound?.());
            continue;
          }
          targets.push({ projection, generation });
        }
        if (targets.length === 0) {
          await sleep(lockRetryMs, undefined, { signal }).catch(() => undefined);
          continue;
        }
        await runRound(
          targets,
          signal,
          async () => {
            const more = await locks.tryAcquire(wanted.filter((name) => !locks.held.has(name)));
            if (more.length > 0) logger.info({ projections: more }, 'projector took over');
            return more.length > 0;
          },
          (restart) => (restartRound = restart),
        );
        restartRound = undefined;
      }
    });

  /**
   * A projection whose code changed (its version differs from the active generation's) is rebuilt
   * beside the live generation, which keeps serving its last state meanwhile; once the replay
   * switches, the round restarts and follows the new generation. A failed rebuild is not retried
   * by this process (status shows the failure).
   */
  const rebuilding = new Map<string, 'running' | 'failed'>();
  const rebuildJobs = new Set<Promise<void>>();
  const rebuildOutdated = (projection: Projection, activeVersion: number, onDone: () => void): void => {
    if (rebuilding.has(projection.name)) return;
    rebuilding.set(projection.name, 'running');
    logger.warn(
      { projection: projection.name, active: activeVersion, code: projection.version },
      'the projection changed: rebuilding it beside the live generation',
    );
    const job = replayProjections({
      pool,
      eventStore,
      projections: [projection],
      logger,
      signal: stopping.signal,
      ...(options.bulkLoad === undefined ? {} : { bulkLoad: options.bulkLoad }),
    })
      .then(() => {
        rebuilding.delete(projection.name);
        onDone();
      })
      .catch((error: unknown) => {
        rebuilding.set(projection.name, 'failed');
        if (!stopping.signal.aborted) logger.error({ err: error, projection: projection.name }, 'rebuilding the changed projection failed; it stays outdated');
      })
      .finally(() => rebuildJobs.delete(job));
    rebuildJobs.add(job);
  };

  /** Follows the log for these targets until the signal aborts, a lock is gained or a conflict. */
  const runRound = async (
    initial: readonly BatchTarget[],
    outer: AbortSignal,
    gainedLocks: () => Promise<boolean>,
    exposeRestart: (restart: () => void) => void,
  ): Promise<void> => {
    const round = new AbortController();
    exposeRestart(() => round.abort());
    const signal = AbortSignal.any([outer, round.signal]);
    const lockPoll = (async () => {
      while (!signal.aborted) {
        await sleep(lockRetryMs, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
        if (await gainedLocks().catch(() => false)) round.abort();
      }
    })();
    let targets = initial;
    try {
      for await (const batch of eventStore.subscribe({ from: minimumCheckpoint(targets.map((t) => t.generation.checkpoint)), batchSize, signal })) {
        const decoded = decodeBatch(batch, 'strict', undefined, undefined, knownVersions);
        const result = await pool.transaction((tx) => applyBatchInTransaction(tx, targets, decoded, 'live', logger));
        // A projection that holds follows no more of the log in this process (this code cannot read
        // the event it holds at; status and supply_projection_held say so); the others go on.
        for (const held of result.held) {
          logger.error(
            { ...held, position: formatPosition(held.position) },
            'projection holds: the event is of a schema version newer than this release reads; deploy a release that reads it (readers before writers)',
          );
        }
        targets = result.targets.filter((target) => !result.held.some((held) => held.projection === target.projection.name));
        if (targets.length === 0) {
          await sleep(lockRetryMs * 60, undefined, { signal }).catch(() => undefined);
          return;
        }
        // A suspension or reactivation is on every leased standby before the next batch (docs/operators.md).
        if (result.accessChanged === true) await awaitLeasedStandbys(pool, { signal });
        for (const [projection, count] of result.applied) options.observer?.applied(projection, count);
        for (const letter of result.deadLetters) options.observer?.deadLettered(letter);
      }
    } catch (error) {
      if (error instanceof CheckpointConflictError) {
        logger.info({ err: error }, 'checkpoints moved elsewhere; reloading them');
      } else if (!signal.aborted) {
        logger.error({ err: error }, 'projector batch failed; retrying from the checkpoints');
        await sleep(1000, undefined, { signal: outer }).catch(() => undefined);
      }
    } finally {
      round.abort();
      await lockPoll;
    }
  };

  const stopped = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await runRounds();
      } catch (error) {
        if (stopping.signal.aborted) break;
        logger.error({ err: error }, 'projector lost its database connection; starting over');
        await sleep(1000, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  })();

  return {
    stop: async () => {
      stopping.abort();
      await stopped;
      await Promise.allSettled([...rebuildJobs]);
    },
    stopped,
  };
}
