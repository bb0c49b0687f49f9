import { AsyncResource } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import type { DatabasePool } from 'slonik';
import { compareLogPositions, type EventStore, type RecordedEvent } from '../eventStore/eventStore.js';
import type { Logger } from '../platform/logger.js';
import { applyBatchInTransaction, deadLetteredEventIds, namedStop, type BatchTarget } from './applyBatch.js';
import {
  analyzeStatement,
  deferredIndexStatements,
  createGeneration,
  missingDeferredIndexes,
  dropGenerationSchema,
  ensureActiveGenerations,
  lockActiveGenerations,
  pointViewsForSwitch,
  setGenerationState,
  unfinishedBuilds,
  type Generation,
} from './generations.js';
import { minimumCheckpoint } from './logPositions.js';
import { RebuildMemory, type Projection } from './projection.js';
import { withProjectionLocks } from './projectionLocks.js';
import { foldLogThroughNode, FoldedBatchesError } from './sideBySide.js';
import { BulkLoader, LogLoadRefusedError, type BulkLoadOptions } from './bulkLoad.js';

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
  /** Decode every event through its zod schema, as live projectors do; by default the stored JSON is trusted (checkTrustedEvent). */
  readonly strict?: boolean;
  /** Projections applying side by side, each in a transaction of its own (default defaultReplayParallelism; below the pool's size). */
  readonly parallelism?: number;
  /** Real Postgres: COPY lanes for insert-only projections (insertOnlyFolding). Absent on PGlite. */
  readonly bulkLoad?: BulkLoadOptions;
  /** With several lanes: events of the log each projection folds before a write (default defaultFoldEvents; 0: every batch on its own). */
  readonly foldEvents?: number;
  /** With bulkLoad and the log in the same database: Postgres loads what it can from the log by itself (InsertedRows.fromLog). Default true. */
  readonly loadFromLog?: boolean;
  /** Start over, dropping what an earlier replay left building, rather than resume it from its checkpoint. */
  readonly fresh?: boolean;
};

/**
 * Events folded before each write in a rebuild: a row that changes all through the log (a box's
 * balance) is written once a write. A fold holds the rows it changed, not the events.
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
    /** Loaded by Postgres from the log rather than through Node. */
    readonly fromLog: boolean;
    /** Resumed from what an earlier replay left building. */
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

/** A replay's generations, made (or resumed) before the load. */
type Prepared = {
  readonly targets: readonly BatchTarget[];
  /** Schemas of the generations an earlier replay left building, resumed from their checkpoints. */
  readonly resumed: ReadonlySet<string>;
  /** Events dead-lettered for these projections: a trusted replay decodes them strictly. */
  readonly suspects: ReadonlySet<string> | undefined;
};

/** Where the load left the generations. */
type Loaded = {
  readonly targets: readonly BatchTarget[];
  /** The targets that went through Node (the others Postgres loaded from the log, indexes and all). */
  readonly byNode: readonly BatchTarget[];
  readonly fromLog: readonly BatchTarget[];
  readonly seen: number;
  readonly resumedAtEvents: number;
};

/**
 * One replay, step by step: take the replay locks, prepare the generations, load the log into
 * them, build their indexes, switch readers to them. A failure at any step drops every generation
 * it built (the live ones stay) and is thrown with its event named.
 */
async function replayOnce(options: ReplayOptions): Promise<ReplayResult> {
  const { pool, projections } = options;
  const names = projections.map((p) => p.name);
  const started = performance.now();
  return withProjectionLocks(
    pool,
    async (locks) => {
      const taken = await locks.tryAcquire(names);
      if (taken.length !== names.length) throw new ReplayBusyError(names.filter((name) => !taken.includes(name)));
      const prepared = await prepareGenerations(options);
      try {
        const step = stepTimer(options.logger, started);
        const loaded = await loadLog(options, prepared);
        step('replay loaded the log', { events: loaded.seen });
        await buildIndexes(options, loaded.byNode, prepared.resumed);
        step('replay built the indexes and statistics');
        const switched = await switchReaders(options, loaded.targets);
        step('replay switched readers', { caughtUp: switched.caughtUp });
        const result: ReplayResult = {
          events: loaded.seen + switched.caughtUp,
          resumedAtEvents: loaded.resumedAtEvents,
          seconds: (performance.now() - started) / 1000,
          projections: switched.targets.map((t) => ({
            projection: t.projection.name,
            generation: t.generation.generation,
            eventsApplied: Number(t.generation.eventsApplied),
            replaced: switched.replaced.find((g) => g.projection === t.projection.name)?.generation ?? 0,
            fromLog: loaded.fromLog.some((f) => f.projection === t.projection),
            resumed: prepared.resumed.has(t.generation.schemaName),
          })),
        };
        options.onProgress?.({ seen: result.events, total: result.events });
        options.logger.info(result, 'replay switched readers to the new generation');
        return result;
      } catch (caught) {
        throw await cleanUp(options, prepared.targets, caught);
      }
    },
    'replay',
  );
}

/**
 * Step 1: the generations to build. Per projection, the one an earlier replay left building when
 * it can be resumed (unfinishedBuilds), else a new one, empty.
 */
async function prepareGenerations(options: ReplayOptions): Promise<Prepared> {
  const { pool, projections, logger } = options;
  await ensureActiveGenerations(pool, projections);
  const resumable = await unfinishedBuilds(pool, projections, options.fresh === true, logger);
  const suspects = options.strict === true ? undefined : await deadLetteredEventIds(pool, projections.map((p) => p.name));
  const targets: BatchTarget[] = [];
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
  return { targets, resumed, suspects };
}

/**
 * Step 2: the log up to its head into the generations. Projections Postgres can load by itself
 * (loadableFromLog) load beside the others, each on a connection of its own; the others take the
 * log through Node, from the lowest of their checkpoints, side by side on several connections
 * (applyLogSideBySide) or batch by batch on one (PGlite). What arrives after the head is the
 * switch's to apply.
 */
async function loadLog(options: ReplayOptions, prepared: Prepared): Promise<Loaded> {
  const { pool, eventStore, logger } = options;
  const { targets } = prepared;
  const bulk = options.bulkLoad === undefined ? undefined : new BulkLoader(options.bulkLoad, logger);
  let loading: Promise<BatchTarget>[] = [];
  let log: AsyncIterator<readonly RecordedEvent[], void, undefined> | undefined;
  try {
    const head = await eventStore.head();
    const total = Number(head.eventCount);
    const fromLog = head.eventCount === 0n ? [] : await loadableFromLog(pool, options, targets);
    let byNode = targets.filter((target) => !fromLog.includes(target));
    // Each projection that resumes skips what it has already.
    const logFrom = minimumCheckpoint(byNode.map((t) => t.generation.checkpoint));
    const resumedAtEvents = byNode.length === 0 ? 0 : Math.min(...byNode.map((t) => Number(t.generation.eventsSeen)));
    const progress = (seen: number) => options.onProgress?.({ seen, total: Math.max(total, seen) });
    progress(resumedAtEvents);
    loading = fromLog.map((target) => {
      if (bulk === undefined) throw new Error('loading from the log needs the bulk loader');
      // Node's decode reads every event from logFrom on, and stops at a type it does not know.
      const typesChecked = byNode.length > 0 && compareLogPositions(logFrom, target.generation.checkpoint) <= 0;
      const load = indexesToBuild(pool, target, prepared.resumed)
        .then((indexes) => bulk.loadFromLog(target, head, indexes, typesChecked))
        .then((loadedTarget) => {
          logger.debug({ projection: target.projection.name }, 'replay: Postgres loaded a projection from the log');
          return loadedTarget;
        });
      load.catch(() => undefined);
      return load;
    });

    let seen = total;
    if (byNode.length > 0) {
      const foldEvents = options.foldEvents ?? defaultFoldEvents;
      const folded = await foldLogThroughNode({
        pool,
        eventStore,
        logger,
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        decoding: options.strict === true ? 'strict' : 'trusted',
        parallelism: lanesOf(options),
        suspects: prepared.suspects,
        targets: byNode,
        from: logFrom,
        ...(bulk === undefined ? {} : { bulk }),
        ...(foldEvents > 0 ? { foldEvents } : {}),
        onProgress: (events) => progress(resumedAtEvents + events),
        opened: (opened) => {
          log = opened;
        },
      });
      byNode = folded.targets;
      seen = resumedAtEvents + folded.events;
      logger.debug({ events: folded.events }, 'replay: Node folded the log');
    }
    const loaded = await Promise.all(loading);
    loading = [];
    progress(seen);
    const after = (target: BatchTarget) => byNode.find((t) => t.projection === target.projection) ?? loaded.find((t) => t.projection === target.projection) ?? target;
    return { targets: targets.map(after), byNode, fromLog, seen, resumedAtEvents };
  } catch (error) {
    // A load from the log still running holds its table: it ends (or fails) before the drop.
    await Promise.allSettled(loading);
    // Closes a log stream still open (its connection).
    await log?.return?.().catch(() => undefined);
    throw error;
  } finally {
    await bulk?.close();
  }
}

/**
 * Step 3: the deferred indexes of the generations loaded through Node, each built on a connection
 * of its own side by side (the ledger's two do not wait for each other), and fresh planner
 * statistics before readers see the tables: the tables without an index to build are analysed
 * while the builds run, the others after theirs (ANALYZE waits for the build's lock). Those loaded
 * from the log have built theirs already.
 */
async function buildIndexes(options: ReplayOptions, targets: readonly BatchTarget[], resumed: ReadonlySet<string>): Promise<void> {
  const { pool } = options;
  const parallelism = lanesOf(options);
  await eachAtMost(parallelism, await indexAndStatisticsJobs(pool, targets, resumed), async (statement) => {
    options.signal?.throwIfAborted();
    await pool.query(statement);
  });
}

/**
 * Step 4: one transaction locks the live checkpoints (a running projector waits), applies what
 * arrived after the load, points the read_models views at the new tables and drops the old ones.
 * Readers see the old data until it commits and the new data after. Returns the new generations,
 * those they replaced and the events applied here.
 */
async function switchReaders(options: ReplayOptions, loaded: readonly BatchTarget[]): Promise<{ targets: BatchTarget[]; replaced: readonly Generation[]; caughtUp: number }> {
  const { pool, eventStore, logger } = options;
  const batchSize = options.batchSize ?? 5000;
  // When the log is in another store it is read on the store's own connection, outside the
  // transaction's async context (which slonik would otherwise refuse).
  const logReader = new AsyncResource('replay-log-reader');
  // Several batches in one transaction that no lane confirms: the projections read back (no rebuild memory).
  let targets: BatchTarget[] = loaded.map(({ projection, generation }) => ({ projection, generation }));
  let caughtUp = 0;
  const replaced = await pool.transaction(async (tx) => {
    const live = await lockActiveGenerations(tx, targets.map((t) => t.projection.name));
    for (;;) {
      const from = minimumCheckpoint(targets.map((t) => t.generation.checkpoint));
      const batch = eventStore.readAllOn ? await eventStore.readAllOn(tx, from, batchSize) : await logReader.runInAsyncScope(() => eventStore.readAll(from, batchSize));
      if (batch.events.length > 0) {
        targets = [...(await applyBatchInTransaction(tx, targets, batch.events, 'replay', logger)).targets];
        caughtUp += batch.events.length;
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
  return { targets, replaced, caughtUp };
}

/**
 * On a failure: the generations being built are dropped and marked failed (the live ones stay);
 * returns the error to throw, its event named when it came from a lean read.
 */
async function cleanUp(options: ReplayOptions, targets: readonly BatchTarget[], caught: unknown): Promise<unknown> {
  const { pool, logger } = options;
  const error = await namedStop(caught, options.eventStore).catch(() => caught);
  const reason = error instanceof Error ? error.message : String(error);
  for (const target of targets) {
    await pool
      .transaction(async (tx) => {
        await dropGenerationSchema(tx, target.generation.schemaName);
        await setGenerationState(tx, target.generation, 'failed', reason);
      })
      .catch((cleanupError: unknown) => logger.error({ err: cleanupError }, 'could not clean up a failed replay generation'));
  }
  return error;
}

/**
 * The targets Postgres loads from the log itself: insert-only projections with InsertedRows.fromLog,
 * when there are COPY lanes (real Postgres), the log is in the same database, the decode is the
 * trusted one (a strict replay decodes every event in Node) and the projection has no dead-lettered
 * event (the ordinary path deals with those one by one).
 */
async function loadableFromLog(pool: DatabasePool, options: ReplayOptions, targets: readonly BatchTarget[]): Promise<BatchTarget[]> {
  if (options.bulkLoad === undefined || options.strict === true || options.loadFromLog === false || options.eventStore.readAllOn === undefined) return [];
  const loadable: BatchTarget[] = [];
  for (const target of targets) {
    if (target.projection.fold.rows?.fromLog === undefined) continue;
    if ((await deadLetteredEventIds(pool, [target.projection.name])).size > 0) continue;
    loadable.push(target);
  }
  return loadable;
}

/**
 * Side-by-side transactions of a replay on a machine with `cores` cores: one a core, and at least
 * two (one is the single-connection path of PGlite). Projections fold outside their transactions
 * and hold a connection only to write, so more lanes only make Node and Postgres's backends take
 * turns on the cores (docs/benchmarks.md).
 */
export function defaultReplayParallelism(cores: number): number {
  return Math.max(2, cores);
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

/** Logs the end of each step of a replay with its seconds and the replay's so far. */
function stepTimer(logger: Logger, started: number): (message: string, fields?: Record<string, unknown>) => void {
  let last = performance.now();
  return (message, fields = {}) => {
    const now = performance.now();
    logger.info({ ...fields, stepSeconds: Math.round(now - last) / 1000, seconds: Math.round(now - started) / 1000 }, message);
    last = now;
  };
}

/** Transactions a replay runs side by side: at most one a projection. */
function lanesOf(options: ReplayOptions): number {
  return Math.max(1, Math.min(options.parallelism ?? defaultReplayParallelism(availableParallelism()), options.projections.length));
}

/** Runs `work` for every item, at most `parallelism` at once; every one ends before a failure is thrown. */
async function eachAtMost<T>(parallelism: number, items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) {
      const item = items[index];
      if (item !== undefined) await work(item);
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(parallelism, items.length) }, worker));
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}
