import { AsyncResource } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import type { DatabasePool } from 'slonik';
import { compareLogPositions, logStart, type EventStore, type LogPosition, type RecordedEvent } from '../eventStore/eventStore.js';
import type { Logger } from '../platform/logger.js';
import { applyBatchInTransaction, dataReadBy, deadLetteredEventIds, decodeBatch, leanReading, namedStop, type BatchTarget, type DecodedBatch, type EventDecoding } from './applyBatch.js';
import {
  analyzeStatement,
  buildIsIntact,
  deferredIndexStatements,
  createGeneration,
  missingDeferredIndexes,
  dropGenerationSchema,
  ensureActiveGenerations,
  loadGenerations,
  lockActiveGenerations,
  pointViewsForSwitch,
  setGenerationState,
  type Generation,
} from './generations.js';
import { minimumCheckpoint } from './logPositions.js';
import { RebuildMemory, type Projection } from './projection.js';
import { withProjectionLocks } from './projectionLocks.js';
import { applyLogSideBySide, applyReplayBatch, FoldedBatchesError } from './sideBySide.js';
import { BulkLoader, LogLoadRefusedError, type BulkLoadOptions } from './bulkLoad.js';
import { foldOnThread, logBatches, type ReplayThreads } from './replayThreads.js';

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
  /**
   * Decode every event through its zod schema, as live projectors do. By default a replay trusts
   * the stored JSON (checked when it was appended) and checks only type and schema version.
   */
  readonly strict?: boolean;
  /**
   * How many projections apply a batch side by side, each in a transaction on a connection of its
   * own. Default `defaultReplayParallelism`; keep it below the pool's size.
   */
  readonly parallelism?: number;
  /**
   * Real Postgres: where insert-only projections (Projection.bulkRows) load their rows with COPY
   * on connections of their own. Absent (PGlite): every projection goes through `apply`.
   */
  readonly bulkLoad?: BulkLoadOptions;
  /**
   * With several lanes (parallelism > 1): events of the log a folding projection
   * (Projection.folding) folds in memory before each write. Default `defaultFoldEvents`; 0 applies
   * every batch on its own.
   */
  readonly foldEvents?: number;
  /**
   * With `bulkLoad`, a log in the same database and the trusted decode: insert-only projections
   * that can (BulkRows.fromLog) are loaded by Postgres itself (BulkLoader.loadFromLog) beside the
   * others. Default true; false loads every projection through Node.
   */
  readonly loadFromLog?: boolean;
  /**
   * Starts every projection over from the start of the log, dropping what an earlier replay that
   * did not finish left building. By default such a generation, when intact (its schema and tables
   * there, the projection's current definition), is resumed from its last committed checkpoint.
   */
  readonly fresh?: boolean;
  /**
   * With several lanes, `bulkLoad` and the log in the same database: the projections folded on a
   * worker thread beside the main one (ReplayThreads). Absent: every projection on the main thread.
   */
  readonly threads?: ReplayThreads;
};

/**
 * Events folded before each write of a folding projection in a rebuild. Each write then carries
 * one row per row changed, however often it changed (a box's balance changes with every movement
 * of the box). What a fold holds is bounded by the rows it changed, not by the events: they are
 * let go once folded. 1M-event log, 2 cores: 16.7-17.6 s against 22.8-23.8 s batch by batch,
 * Postgres CPU 13.7-14.1 s against 19.6-20.4; 100 000 and 200 000 gained nothing more and held
 * 20-45 MB more.
 */
export const defaultFoldEvents = 50_000;

export type ReplayResult = {
  /** Events of the log the rebuilt generations cover (with those an earlier, killed replay had built). */
  readonly events: number;
  /** Of those, the events the generations this replay resumed had already built (0: a fresh rebuild). */
  readonly resumedAtEvents: number;
  readonly seconds: number;
  readonly projections: readonly {
    readonly projection: string;
    readonly generation: number;
    readonly eventsApplied: number;
    readonly replaced: number;
    /** Loaded by Postgres from the log (BulkLoader.loadFromLog) rather than through Node. */
    readonly fromLog: boolean;
    /** The generation an earlier replay left building, resumed from its checkpoint. */
    readonly resumed: boolean;
  }[];
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
  try {
    return await replayOnce(options);
  } catch (error) {
    if (error instanceof LogLoadRefusedError) {
      options.logger.warn({ err: error }, 'Postgres could not load a projection from the log; replaying again through Node');
      return replayProjections({ ...options, loadFromLog: false });
    }
    if (!(error instanceof FoldedBatchesError)) throw error;
    // Which event is at fault is known only batch by batch: a replay that applies each batch names it.
    options.logger.warn({ err: error }, 'a folded write failed; replaying again batch by batch to find the event at fault');
    return replayOnce({ ...options, foldEvents: 0 });
  }
}

async function replayOnce(options: ReplayOptions): Promise<ReplayResult> {
  const { pool, eventStore, projections, logger } = options;
  const batchSize = options.batchSize ?? 5000;
  const foldEvents = options.foldEvents ?? defaultFoldEvents;
  const names = projections.map((p) => p.name);
  const started = performance.now();

  return withProjectionLocks(
    pool,
    async (locks) => {
      const taken = await locks.tryAcquire(names);
      if (taken.length !== names.length) throw new ReplayBusyError(names.filter((name) => !taken.includes(name)));
      await ensureActiveGenerations(pool, projections);
      const resumable = await unfinishedBuilds(pool, projections, options.fresh === true, logger);
      const suspects = options.strict === true ? undefined : await deadLetteredEventIds(pool, names);

      let targets: BatchTarget[] = [];
      for (const projection of projections) {
        const generation = resumable.get(projection.name) ?? (await pool.transaction((tx) => createGeneration(tx, projection, 'building')));
        targets.push({ projection, generation, rebuild: new RebuildMemory() });
      }
      const resumed = new Set([...resumable.values()].map((g) => g.schemaName));
      logger.info(
        {
          projections: targets.map((t) => `${t.projection.name}#${t.generation.generation}`),
          resumed: targets.filter((t) => resumed.has(t.generation.schemaName)).map((t) => `${t.projection.name}#${t.generation.generation}@${t.generation.eventsSeen}`),
        },
        'replay building',
      );

      const decoding: EventDecoding = options.strict === true ? 'strict' : 'trusted';
      const parallelism = Math.max(1, Math.min(options.parallelism ?? defaultReplayParallelism(availableParallelism()), projections.length));
      // Opened once it is known where the projections that go through Node start.
      let log: AsyncIterator<readonly RecordedEvent[], void, undefined> | undefined;
      let logFrom: LogPosition = logStart;
      // The types whose data the main thread reads (set with the projections it folds, before its first read).
      let dataOf: ReadonlySet<string> | undefined;
      // Reading and decoding the next batch overlaps with writing this one.
      const readAndDecode = async (): Promise<DecodedBatch | undefined> => {
        log ??= logBatches(eventStore, batchSize, logFrom, dataOf, leanReading(decoding, suspects))[Symbol.asyncIterator]();
        const next = await log.next();
        return next.done === true ? undefined : decodeBatch(next.value, decoding, suspects, dataOf);
      };
      let reading: Promise<DecodedBatch | undefined> | undefined;
      const bulk = options.bulkLoad === undefined ? undefined : new BulkLoader(options.bulkLoad, logger);
      let loading: Promise<BatchTarget>[] = [];
      let fromLog: BatchTarget[] = [];
      try {
        const head = await eventStore.head();
        const total = Number(head.eventCount);
        // Projections Postgres loads by itself from the log, beside the others (they get the
        // catch-up after `head` in the switch, as every projection).
        fromLog = head.eventCount === 0n ? [] : await loadableFromLog(pool, options, targets);
        // The log is read from the lowest checkpoint of the projections that go through Node (the
        // start of the log unless every one of them resumes); each skips what it has already.
        const byNode = targets.filter((target) => !fromLog.includes(target));
        logFrom = minimumCheckpoint(byNode.map((t) => t.generation.checkpoint));
        const resumedAtEvents = byNode.length === 0 ? 0 : Math.min(...byNode.map((t) => Number(t.generation.eventsSeen)));
        let seen = resumedAtEvents;
        options.onProgress?.({ seen, total: Math.max(total, seen) });
        loading = fromLog.map((target) => {
          if (bulk === undefined) throw new Error('loading from the log needs the bulk loader');
          // Node's decode reads every event from logFrom on, and stops at a type it does not know.
          const typesChecked = byNode.length > 0 && compareLogPositions(logFrom, target.generation.checkpoint) <= 0;
          const load = indexesToBuild(pool, target, resumed).then((indexes) => bulk.loadFromLog(target, head, indexes, typesChecked));
          load.catch(() => undefined);
          return load;
        });
        let through = targets.filter((target) => !fromLog.includes(target));
        const lanes = new Lanes(pool, parallelism, logger, bulk);
        if (through.length === 0) {
          seen = total;
        } else if (parallelism > 1) {
          const { threads } = options;
          const threaded = threads === undefined || bulk === undefined || eventStore.readAllOn === undefined ? [] : through.filter((t) => threads.projections.includes(t.projection.name));
          const onMain = through.filter((t) => !threaded.includes(t));
          dataOf = dataReadBy(onMain, decoding);
          logFrom = minimumCheckpoint(onMain.map((t) => t.generation.checkpoint));
          // Events each side has covered (from where its projections stood), for the progress bar.
          const base = (group: readonly BatchTarget[]) => (group.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...group.map((t) => Number(t.generation.eventsSeen))));
          const covered = [base(onMain), base(threaded)];
          const progress = (side: number, events: number) => {
            covered[side] = base(side === 0 ? onMain : threaded) + events;
            const least = Math.min(...covered);
            options.onProgress?.({ seen: least, total: Math.max(total, least) });
          };
          // The first failure, on either thread, stops the other.
          const stop = new AbortController();
          const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
          const onMainThread =
            onMain.length === 0
              ? Promise.resolve({ targets: [], events: 0 })
              : applyLogSideBySide({
                  pool,
                  targets: onMain,
                  parallelism,
                  // Enough for the fast projections to keep Postgres busy while the slowest folds.
                  ahead: 2,
                  next: readAndDecode,
                  logger,
                  signal,
                  onProgress: (events) => progress(0, events),
                  ...(bulk === undefined ? {} : { bulk }),
                  ...(foldEvents > 0 ? { foldEvents } : {}),
                });
          const onThread =
            threads === undefined || threaded.length === 0
              ? Promise.resolve({ targets: [], events: 0 })
              : foldOnThread(
                  threads,
                  { targets: threaded, batchSize, decoding, suspects, foldEvents: foldEvents > 0 ? foldEvents : undefined, parallelism: threaded.length },
                  (events) => progress(1, events),
                  stop.signal,
                );
          for (const side of [onMainThread, onThread]) side.catch((error: unknown) => stop.abort(error));
          const [main, thread] = await Promise.allSettled([onMainThread, onThread]);
          if (main.status === 'rejected') throw main.reason;
          if (thread.status === 'rejected') throw thread.reason;
          through = through.map((target) => [...main.value.targets, ...thread.value.targets].find((t) => t.projection === target.projection) ?? target);
          seen = onMain.length > 0 ? base(onMain) + main.value.events : base(threaded) + thread.value.events;
        } else {
          dataOf = dataReadBy(through, decoding);
          reading = readAndDecode();
          for (;;) {
            options.signal?.throwIfAborted();
            const batch = await reading;
            if (batch === undefined) break;
            reading = readAndDecode();
            through = await lanes.apply(through, batch);
            seen += batch.events.length;
            options.onProgress?.({ seen, total: Math.max(total, seen) });
          }
          reading = undefined;
        }
        await log?.return?.();
        const loaded = await Promise.all(loading);
        loading = [];
        // Only projections loaded from the log: nothing went by batch to report progress.
        if (through.length === 0) options.onProgress?.({ seen, total });
        await bulk?.close();
        targets = targets.map((target) => through.find((t) => t.projection === target.projection) ?? loaded.find((t) => t.projection === target.projection) ?? target);

        // Once loaded: the deferred indexes, each built on a connection of its own side by side
        // (the largest, the ledger's two, do not wait for each other), and fresh planner
        // statistics before readers see the tables: the tables without an index to build are
        // analysed while the builds run, the others after theirs (ANALYZE waits for the build's lock).
        // (Those loaded from the log have built theirs already.)
        await lanes.each(await indexAndStatisticsJobs(pool, through, resumed), async (statement) => {
          options.signal?.throwIfAborted();
          await pool.query(statement);
        });

        // While the switch transaction holds the locks it reads the log itself when the log is in
        // the same database; otherwise on the store's own connection, outside the transaction's
        // async context (which slonik would otherwise refuse).
        const logReader = new AsyncResource('replay-log-reader');
        const replaced = await pool.transaction(async (tx) => {
          const live = await lockActiveGenerations(tx, names);
          // Several batches in one transaction that no lane confirms: the projections read back.
          targets = targets.map(({ projection, generation }) => ({ projection, generation }));
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
          // The views depend on the old tables: repoint them first, then the old schemas can go.
          await pointViewsForSwitch(tx, targets.map((t) => ({ projection: t.projection, schemaName: t.generation.schemaName })), { logger, signal: options.signal });
          for (const target of targets) {
            const old = live.find((g) => g.projection === target.projection.name);
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
          resumedAtEvents,
          seconds: (performance.now() - started) / 1000,
          projections: targets.map((t) => ({
            projection: t.projection.name,
            generation: t.generation.generation,
            eventsApplied: Number(t.generation.eventsApplied),
            replaced: replaced.find((g) => g.projection === t.projection.name)?.generation ?? 0,
            fromLog: fromLog.some((f) => f.projection === t.projection),
            resumed: resumed.has(t.generation.schemaName),
          })),
        };
        logger.info(result, 'replay switched readers to the new generation');
        return result;
      } catch (caught) {
        void reading?.catch(() => undefined);
        // An event read lean is named by its id and stream, looked up by its position.
        const error = await namedStop(caught, eventStore).catch(() => caught);
        // A load from the log still running holds its table: it ends (or fails) before the drop.
        await Promise.allSettled(loading);
        // Closes a log stream still open (its connection), and the COPY lanes.
        await log?.return?.().catch(() => undefined);
        await bulk?.close();
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

/**
 * The targets Postgres loads from the log itself: insert-only projections with BulkRows.fromLog,
 * when there are COPY lanes (real Postgres), the log is in the same database, the decode is the
 * trusted one (a strict replay decodes every event in Node) and the projection has no dead-lettered
 * event (the ordinary path deals with those one by one).
 */
async function loadableFromLog(pool: DatabasePool, options: ReplayOptions, targets: readonly BatchTarget[]): Promise<BatchTarget[]> {
  if (options.bulkLoad === undefined || options.strict === true || options.loadFromLog === false || options.eventStore.readAllOn === undefined) return [];
  const loadable: BatchTarget[] = [];
  for (const target of targets) {
    if (target.projection.bulkRows?.fromLog === undefined) continue;
    if ((await deadLetteredEventIds(pool, [target.projection.name])).size > 0) continue;
    loadable.push(target);
  }
  return loadable;
}

/**
 * Side-by-side transactions of a replay on a machine with `cores` cores: one more than the cores.
 * A batch's transaction holds its connection while Node folds the batch as well as while Postgres
 * writes it, so with as many transactions as cores both sides wait on each other half the time
 * (1M-event log, 2 cores: 22.8 s with 2, 21.0 s with 3).
 */
export function defaultReplayParallelism(cores: number): number {
  return Math.max(1, cores) + 1;
}

/**
 * The deferred indexes a target's generation still needs: all of them, unless it was resumed (the
 * replay that was killed may have built some of them already, in its index builds or in a load
 * from the log).
 */
async function indexesToBuild(pool: DatabasePool, target: BatchTarget, resumed: ReadonlySet<string>) {
  const { schemaName } = target.generation;
  return resumed.has(schemaName) ? missingDeferredIndexes(pool, target.projection, schemaName) : deferredIndexStatements(target.projection, schemaName);
}

/** The statements run once the log is loaded: every deferred index, then ANALYZE of every table, those with no index to build first. */
async function indexAndStatisticsJobs(pool: DatabasePool, targets: readonly BatchTarget[], resumed: ReadonlySet<string>) {
  const builds = (await Promise.all(targets.map((target) => indexesToBuild(pool, target, resumed)))).flat();
  const tables = targets.flatMap((target) =>
    target.projection.tables.map((definition) => ({ definition, statement: analyzeStatement(target.generation.schemaName, definition.name) })),
  );
  const waiting = (definition: { readonly deferredIndexes?: unknown }) => definition.deferredIndexes !== undefined;
  return [...builds, ...tables.filter((t) => !waiting(t.definition)).map((t) => t.statement), ...tables.filter((t) => waiting(t.definition)).map((t) => t.statement)];
}

/**
 * Generations left 'building' by a replay that died (nobody holds their replay lock any more): per
 * projection, the newest one is resumed when it is intact (buildIsIntact) and `fresh` is not
 * asked for; every other one is marked failed and dropped.
 */
async function unfinishedBuilds(pool: DatabasePool, projections: readonly Projection[], fresh: boolean, logger: Logger): Promise<Map<string, Generation>> {
  const building = (await loadGenerations(pool, ['building'])).filter((g) => projections.some((p) => p.name === g.projection));
  const resumable = new Map<string, Generation>();
  for (const projection of projections) {
    const newest = building.filter((g) => g.projection === projection.name).at(-1);
    if (newest !== undefined && !fresh && (await buildIsIntact(pool, projection, newest))) resumable.set(projection.name, newest);
  }
  for (const generation of building) {
    if (resumable.get(generation.projection) === generation) continue;
    logger.warn(
      { projection: generation.projection, generation: generation.generation, fresh },
      fresh ? 'dropping the generation an earlier replay left unfinished (--fresh)' : 'dropping a generation an earlier replay left unfinished',
    );
    await pool.transaction(async (tx) => {
      await dropGenerationSchema(tx, generation.schemaName);
      await setGenerationState(tx, generation, 'failed', fresh ? 'abandoned: a fresh replay started over' : 'abandoned: the replay that built it did not finish');
    });
  }
  for (const generation of resumable.values()) {
    logger.warn(
      { projection: generation.projection, generation: generation.generation, eventsSeen: generation.eventsSeen.toString() },
      'resuming the generation an earlier replay left unfinished, from its last committed batch',
    );
  }
  return resumable;
}

/**
 * One connection (PGlite): every projection applies a batch in one transaction that also moves
 * their checkpoints. Several: the log goes through applyLogSideBySide, and `each` runs the work
 * after the load (indexes, statistics) side by side.
 */
class Lanes {
  constructor(
    private readonly pool: DatabasePool,
    private readonly parallelism: number,
    private readonly logger: Logger,
    private readonly bulk: BulkLoader | undefined,
  ) {}

  async apply(targets: readonly BatchTarget[], batch: DecodedBatch): Promise<BatchTarget[]> {
    return applyReplayBatch(this.pool, targets, batch, this.logger, this.bulk);
  }

  /** Runs `work` for every item, at most `parallelism` at once; every one ends before a failure is thrown. */
  async each<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < items.length; index = next++) {
        const item = items[index];
        if (item !== undefined) await work(item);
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: Math.min(this.parallelism, items.length) }, worker));
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
