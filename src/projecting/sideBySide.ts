import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import type { Logger } from '../platform/logger.js';
import { sql } from '../platform/sql.js';
import type { EventStore, LogPosition, RecordedEvent } from '../eventStore/eventStore.js';
import { applyBatchInTransaction, dataReadBy, decodeBatch, handledEvents, leanReading, planTarget, type BatchTarget, type DecodedBatch, type EventDecoding } from './applyBatch.js';
import type { BulkLoader } from './bulkLoad.js';
import { advanceCheckpoints, advanced, tableResolver, type CheckpointAdvance } from './generations.js';
import type { ProjectedEvent } from './projection.js';
import { isTransientDatabaseError } from './transientErrors.js';

export type SideBySideOptions = {
  readonly pool: DatabasePool;
  readonly targets: readonly BatchTarget[];
  /** Transactions at once (connections of the pool). */
  readonly parallelism: number;
  /** How many batches the fastest projection may be ahead of the slowest. */
  readonly ahead: number;
  /** The next batch of the log, in order; undefined at its end. */
  readonly next: () => Promise<DecodedBatch | undefined>;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
  /** Events every projection has applied so far. */
  readonly onProgress?: (events: number) => void;
  /** COPY lanes for the insert-only projections (real Postgres), when they fold (foldEvents). */
  readonly bulk?: BulkLoader;
  /**
   * Events of the log each projection folds (Projection.fold) before each write; absent:
   * every projection applies each batch. Each write's rows and checkpoint commit together.
   */
  readonly foldEvents?: number;
};

/**
 * A projection's fold or write failed in a folding rebuild. Which event is at fault is not known (its batch is
 * gone): the replay runs again applying batch by batch, which names it (ReplayPoisonError).
 */
export class FoldedBatchesError extends Error {
  constructor(
    readonly projection: string,
    cause: unknown,
  ) {
    super(`projection ${projection} could not apply the batches it folded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'FoldedBatchesError';
  }
}

/**
 * One batch of a rebuild for `targets`, in one transaction that also moves their checkpoints; their
 * rebuild memories trust what it wrote only once it has committed.
 */
export async function applyReplayBatch(pool: DatabasePool, targets: readonly BatchTarget[], batch: DecodedBatch, logger: Logger): Promise<BatchTarget[]> {
  const result = await replayTransaction(pool, (tx) => {
    for (const target of targets) target.rebuild?.begin();
    return applyBatchInTransaction(tx, targets, batch, 'replay', logger);
  });
  for (const target of targets) target.rebuild?.committed();
  return targets.map((target, index) => result.targets[index] ?? target);
}

/** What foldLogThroughNode takes. */
export type ThroughNodeOptions = {
  readonly pool: DatabasePool;
  readonly eventStore: EventStore;
  readonly logger: Logger;
  readonly decoding: EventDecoding;
  readonly batchSize?: number;
  /** Transactions at once: 1 applies batch by batch on one connection (PGlite). */
  readonly parallelism: number;
  readonly suspects: ReadonlySet<string> | undefined;
  readonly targets: readonly BatchTarget[];
  readonly from: LogPosition;
  readonly bulk?: BulkLoader;
  readonly foldEvents?: number;
  readonly signal?: AbortSignal;
  readonly onProgress: (events: number) => void;
  /** Gets the log's stream, which the caller closes on a failure. */
  readonly opened: (log: AsyncIterator<readonly RecordedEvent[], void, undefined>) => void;
};

/**
 * The log from `from` through Node for `targets`: decoded batch by batch, folded side by side on
 * several connections (applyLogSideBySide), or on one connection (PGlite) applied batch by batch
 * in one transaction each while the next batch is read and decoded. Returns the targets and the
 * events they covered.
 */
export async function foldLogThroughNode(options: ThroughNodeOptions): Promise<{ targets: BatchTarget[]; events: number }> {
  const { pool, logger, decoding, suspects, targets, onProgress } = options;
  // The types whose data the decode needs: the stream may leave the others' out.
  const dataOf = dataReadBy(targets, decoding);
  const log = logBatches(options.eventStore, options.batchSize ?? 5000, options.from, dataOf, leanReading(decoding, suspects))[Symbol.asyncIterator]();
  options.opened(log);
  const next = async (): Promise<DecodedBatch | undefined> => {
    const batch = await log.next();
    return batch.done === true ? undefined : decodeBatch(batch.value, decoding, suspects, dataOf);
  };
  let result: { targets: BatchTarget[]; events: number };
  if (options.parallelism > 1) {
    result = await applyLogSideBySide({
      pool,
      targets,
      parallelism: options.parallelism,
      // Enough for the fast projections to keep Postgres busy while the slowest folds.
      ahead: 2,
      next,
      logger,
      onProgress,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.bulk === undefined ? {} : { bulk: options.bulk }),
      ...(options.foldEvents === undefined ? {} : { foldEvents: options.foldEvents }),
    });
  } else {
    let current = [...targets];
    let events = 0;
    let reading = next();
    try {
      for (;;) {
        options.signal?.throwIfAborted();
        const batch = await reading;
        if (batch === undefined) break;
        reading = next();
        current = await applyReplayBatch(pool, current, batch, logger);
        events += batch.events.length;
        onProgress(events);
      }
    } catch (error) {
      void reading.catch(() => undefined);
      throw error;
    }
    result = { targets: current, events };
  }
  await log.return?.();
  return result;
}

/**
 * Applies the log with every projection at its own pace: each takes the batches in log order, each
 * batch in a transaction of its own that also moves its checkpoint, at most `parallelism`
 * transactions at once. No projection waits for the others at the end of a batch, so while Node
 * folds one projection's batch, Postgres writes another's. A batch read ahead is kept until every
 * projection has applied it, and reading stops `ahead` batches past the slowest projection: memory
 * stays bounded whatever the length of the log. The first failure stops every projection; all
 * have stopped when it is thrown.
 */
export async function applyLogSideBySide(options: SideBySideOptions): Promise<{ targets: BatchTarget[]; events: number }> {
  const { pool, parallelism, ahead, next, logger, signal } = options;
  const targets = [...options.targets];
  const window = new Map<number, Promise<DecodedBatch | undefined>>();
  let read = 0;
  // The next batch index each projection applies (Infinity once it has reached the end).
  const done = targets.map(() => 0);
  const applied = targets.map(() => 0);
  let failed = false;
  let waiting: (() => void)[] = [];
  const wakeAll = () => {
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
  };
  const wait = () => new Promise<void>((resolve) => waiting.push(resolve));
  const slowest = () => Math.min(...done);

  const batchAt = async (index: number): Promise<DecodedBatch | undefined> => {
    while (!failed && index >= slowest() + ahead) await wait();
    if (failed) return undefined;
    while (read <= index) {
      const reading = next();
      // Awaited by the projections; a failure is theirs to report, not an unhandled rejection.
      reading.catch(() => undefined);
      window.set(read, reading);
      read += 1;
    }
    const batch = window.get(index);
    if (batch === undefined) throw new Error(`batch ${index} of the log was released before every projection applied it`);
    return batch;
  };

  // Transaction slots; a freed slot goes to the projection furthest behind, which bounds the replay.
  let active = 0;
  const queued: { lane: number; resolve: () => void }[] = [];
  const acquire = async (lane: number): Promise<void> => {
    if (active < parallelism) {
      active += 1;
      return;
    }
    await new Promise<void>((resolve) => queued.push({ lane, resolve }));
  };
  const release = () => {
    let best: number | undefined;
    for (const [at, entry] of queued.entries()) {
      const furthest = best === undefined ? undefined : queued[best];
      if (furthest === undefined || (done[entry.lane] ?? 0) < (done[furthest.lane] ?? 0)) best = at;
    }
    const handed = best === undefined ? undefined : queued.splice(best, 1)[0];
    if (handed === undefined) active -= 1;
    else handed.resolve();
  };

  /** The batch is folded or applied by this lane: it may be let go once every lane has. */
  const passed = (lane: number, batch: DecodedBatch, index: number) => {
    applied[lane] = (applied[lane] ?? 0) + batch.events.length;
    done[lane] = index + 1;
    const slowestIndex = slowest();
    for (const kept of window.keys()) if (kept < slowestIndex) window.delete(kept);
    options.onProgress?.(Math.min(...applied));
    wakeAll();
  };

  /** What a folding lane holds between two commits: the projection's changes, or an open COPY. */
  type OpenFold = { fold(events: readonly ProjectedEvent[]): Promise<void>; commit(advance: CheckpointAdvance): Promise<void>; abort(): Promise<void> };

  const openFold = async (lane: number, target: BatchTarget): Promise<OpenFold> => {
    const { bulk } = options;
    if (bulk?.loads(target) === true) {
      const copy = await bulk.open(target);
      return { fold: copy.write, commit: copy.commit, abort: copy.abort };
    }
    const table = tableResolver(target.generation.schemaName);
    const rebuild = target.rebuild === undefined ? {} : { rebuild: target.rebuild };
    target.rebuild?.begin();
    const changes = await target.projection.fold.begin({ db: pool, table, ...rebuild });
    return {
      fold: changes.fold,
      commit: async (advance) => {
        await acquire(lane);
        try {
          if (failed) return;
          await replayTransaction(pool, async (tx) => {
            await advanceCheckpoints(tx, [advance]);
            await changes.write({ db: tx, table, ...rebuild });
          });
          target.rebuild?.committed();
        } finally {
          release();
        }
      },
      abort: async () => undefined,
    };
  };

  /**
   * A folding lane: each batch is folded in (into the projection's changes in Node, or streamed
   * into an open COPY) and let go; every `foldEvents` events of the log, one transaction writes
   * what they changed and moves the checkpoint past them. The lanes' first commits come at
   * staggered points of the log, so that they do not all fall on the same batch.
   */
  const runFolded = async (lane: number, foldEvents: number): Promise<void> => {
    const name = targets[lane]?.projection.name ?? '?';
    // What fold and commit throw (a transient failure aside) becomes a FoldedBatchesError.
    const folded = async <T>(work: () => Promise<T>): Promise<T> => {
      try {
        return await work();
      } catch (error) {
        if (isTransientDatabaseError(error)) throw error;
        targets[lane]?.rebuild?.forget();
        throw new FoldedBatchesError(name, error);
      }
    };
    let group: { open: OpenFold; advance: CheckpointAdvance | undefined; events: number } | undefined;
    let due = Math.ceil((foldEvents * (lane + 1)) / targets.length);
    try {
      for (let index = 0; ; index += 1) {
        signal?.throwIfAborted();
        const batch = await batchAt(index);
        if (failed) break;
        const current = targets[lane];
        if (current === undefined) break;
        if (batch !== undefined) {
          const plan = planTarget(current, batch);
          if (plan.advance !== undefined) {
            group ??= { open: await folded(() => openFold(lane, current)), advance: undefined, events: 0 };
            const events = handledEvents(batch, plan.handled);
            // An event the strict decode refused: applying batch by batch stops at it by name.
            if (events === undefined) throw new FoldedBatchesError(name, new Error(`an event of batch ${index} of the log did not decode`));
            const { open } = group;
            if (events.length > 0) await folded(() => open.fold(events));
            group.advance = group.advance === undefined ? plan.advance : joined(group.advance, plan.advance);
            group.events += batch.events.length;
          }
          passed(lane, batch, index);
        }
        if (group !== undefined && (batch === undefined || group.events >= due)) {
          const { open, advance } = group;
          group = undefined;
          due = foldEvents;
          if (advance !== undefined && !failed) {
            await folded(() => open.commit(advance));
            const committed = targets[lane];
            if (committed !== undefined) targets[lane] = { ...committed, generation: advanced(committed.generation, advance) };
          } else await open.abort();
        }
        if (batch === undefined) break;
      }
    } finally {
      await group?.open.abort();
    }
    done[lane] = Number.POSITIVE_INFINITY;
    wakeAll();
  };

  const run = async (lane: number): Promise<void> => {
    if (options.foldEvents !== undefined) return runFolded(lane, options.foldEvents);
    for (let index = 0; ; index += 1) {
      signal?.throwIfAborted();
      const batch = await batchAt(index);
      if (failed || batch === undefined) break;
      await acquire(lane);
      let result;
      try {
        const current = targets[lane];
        if (failed || current === undefined) break;
        result = await applyReplayBatch(pool, [current], batch, logger);
        targets[lane] = result[0] ?? current;
      } finally {
        release();
      }
      passed(lane, batch, index);
    }
    done[lane] = Number.POSITIVE_INFINITY;
    wakeAll();
  };

  const settled = await Promise.allSettled(
    targets.map((_, lane) =>
      run(lane).catch((error: unknown) => {
        failed = true;
        wakeAll();
        // Each waiter takes its slot, sees the failure and gives the slot back.
        for (const entry of queued.splice(0)) {
          active += 1;
          entry.resolve();
        }
        throw error;
      }),
    ),
  );
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return { targets, events: Math.max(0, ...applied) };
}

/**
 * A transaction of a rebuild's generation. A crash loses its newest writes together with their
 * checkpoint (the transaction stays atomic), and the generation is not read yet: no need to wait
 * for the disk.
 */
async function replayTransaction<T>(pool: DatabasePool, work: (tx: DatabaseTransactionConnection) => Promise<T>): Promise<T> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`SET LOCAL synchronous_commit TO off`);
    return work(tx);
  });
}

/** Two consecutive advances of one checkpoint as one. */
function joined(earlier: CheckpointAdvance, later: CheckpointAdvance): CheckpointAdvance {
  return { generation: earlier.generation, to: later.to, seen: earlier.seen + later.seen, applied: earlier.applied + later.applied, lastRecordedAt: later.lastRecordedAt };
}

/**
 * The whole log for a replay from `start`: the store's stream where it has one (Postgres: COPY, a
 * few batches a statement), then readAll from where the stream ended up to the head, for what was
 * appended meanwhile. `dataOf`: the types whose data the reader needs (the stream may leave the
 * others' out; readAll gives every event's). `lean`: the stream may leave out each event's stream
 * name, revision and id (StreamAllOptions.lean); readAll gives them.
 */
async function* logBatches(
  eventStore: EventStore,
  batchSize: number,
  start: LogPosition,
  dataOf: ReadonlySet<string> | undefined,
  lean: boolean,
): AsyncGenerator<readonly RecordedEvent[], void, undefined> {
  let from: LogPosition = start;
  if (eventStore.streamAll) {
    for await (const batch of eventStore.streamAll(from, batchSize, { ...(dataOf === undefined ? {} : { dataOf: [...dataOf] }), lean })) {
      yield batch.events;
      from = batch.next;
    }
  }
  for (;;) {
    const batch = await eventStore.readAll(from, batchSize);
    if (batch.events.length > 0) yield batch.events;
    from = batch.next;
    if (batch.atHead || batch.events.length === 0) return;
  }
}
