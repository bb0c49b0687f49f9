import { parentPort, Worker, workerData } from 'node:worker_threads';
import { createPostgresEventStore } from '../eventStore/postgresEventStore.js';
import { logStart, type EventStore, type LogPosition, type RecordedEvent } from '../eventStore/eventStore.js';
import { createDatabasePool } from '../platform/db.js';
import { createLogger } from '../platform/logger.js';
import { dataReadBy, decodeBatch, leanReading, ReplayDecodeError, ReplayPoisonError, type BatchTarget, type DecodedBatch, type EventDecoding } from './applyBatch.js';
import type { Generation } from './generations.js';
import { minimumCheckpoint } from './logPositions.js';
import { RebuildMemory, type Projection } from './projection.js';
import { applyLogSideBySide, FoldedBatchesError } from './sideBySide.js';

/**
 * Where a replay folds some projections on a thread of their own (node:worker_threads), beside the
 * main thread's: Node's share of a rebuild is then spread over two cores. The thread reads and
 * decodes the log itself (a stream of its own: handing decoded events from one thread to another
 * costs as much as decoding them) and writes its projections' generations through connections of
 * its own, each write committed with its checkpoint as on the main thread; the main thread then
 * builds the indexes and switches every projection at once, as ever.
 */
export type ReplayThreads = {
  /**
   * The thread's module: it calls serveReplayThread with a resolver of the projections by name
   * (the projections are code, not data: the thread imports them itself).
   */
  readonly module: URL;
  /** The projections folded on the thread (when the replay rebuilds them). */
  readonly projections: readonly string[];
  readonly connectionUri: string;
  readonly logLevel: string;
};

type ThreadInput = {
  readonly connectionUri: string;
  readonly logLevel: string;
  readonly projections: readonly string[];
  readonly generations: readonly Generation[];
  readonly batchSize: number;
  readonly decoding: EventDecoding;
  readonly suspects: readonly string[];
  readonly foldEvents: number | undefined;
  readonly parallelism: number;
};

type SerializedError = { readonly name: string; readonly message: string; readonly stack?: string; readonly fields: Record<string, unknown> };

type ThreadMessage =
  | { readonly kind: 'progress'; readonly events: number }
  | { readonly kind: 'done'; readonly generations: readonly Generation[]; readonly events: number }
  | { readonly kind: 'failed'; readonly error: SerializedError };

/**
 * Folds `targets` on a thread: resolves with their generations after the log (as
 * applyLogSideBySide does), rejects with the thread's error (the replay's own errors keep their
 * class: a folded write's failure still sends the replay batch by batch). Aborting `signal`
 * terminates the thread (what it had not committed is rolled back with its connections).
 */
export async function foldOnThread(
  threads: ReplayThreads,
  input: { targets: readonly BatchTarget[]; batchSize: number; decoding: EventDecoding; suspects: ReadonlySet<string> | undefined; foldEvents: number | undefined; parallelism: number },
  onProgress: (events: number) => void,
  signal: AbortSignal,
): Promise<{ targets: BatchTarget[]; events: number }> {
  const data: ThreadInput = {
    connectionUri: threads.connectionUri,
    logLevel: threads.logLevel,
    projections: input.targets.map((t) => t.projection.name),
    generations: input.targets.map((t) => t.generation),
    batchSize: input.batchSize,
    decoding: input.decoding,
    suspects: [...(input.suspects ?? [])],
    foldEvents: input.foldEvents,
    parallelism: input.parallelism,
  };
  const worker = startThread(threads.module, data);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (work: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      work();
    };
    const onAbort = () => {
      settle(() => reject(signal.reason instanceof Error ? signal.reason : new Error('the replay thread was stopped')));
      void worker.terminate();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: ThreadMessage) => {
      if (message.kind === 'progress') onProgress(message.events);
      else if (message.kind === 'done') {
        settle(() =>
          resolve({
            targets: input.targets.map((target, index) => ({ projection: target.projection, generation: message.generations[index] ?? target.generation })),
            events: message.events,
          }),
        );
      } else settle(() => reject(revived(message.error)));
    });
    worker.once('error', (error) => settle(() => reject(error)));
    worker.once('exit', (code) => settle(() => reject(new Error(`the replay thread of ${data.projections.join(', ')} ended (code ${code}) before the log did`))));
  });
}

/**
 * The thread: in a compiled build the module itself; from the TypeScript sources (tests, a stale
 * build) through tsx's loader, registered in the thread first.
 */
function startThread(module: URL, data: ThreadInput): Worker {
  if (!module.pathname.endsWith('.ts')) return new Worker(module, { workerData: data });
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(module.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}

/**
 * The body of a replay thread's module: folds the projections it was given (by name, through
 * `resolve`) from their checkpoints to the end of the log, and reports to the replay.
 */
export async function serveReplayThread(resolve: (names: readonly string[]) => readonly Projection[]): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('serveReplayThread runs in a worker thread');
  const post = (message: ThreadMessage) => port.postMessage(message);
  const input = workerData as ThreadInput;
  const logger = createLogger(input.logLevel);
  const pool = await createDatabasePool(input.connectionUri, input.parallelism + 1);
  const eventStore = createPostgresEventStore({ pool, kind: 'postgres', logger, connectionUri: input.connectionUri });
  try {
    const projections = resolve(input.projections);
    const targets: BatchTarget[] = projections.map((projection, index) => {
      const generation = input.generations[index];
      if (generation === undefined || generation.projection !== projection.name) throw new Error(`the replay thread has no generation of ${projection.name}`);
      return { projection, generation, rebuild: new RebuildMemory() };
    });
    const suspects = new Set(input.suspects);
    const dataOf = dataReadBy(targets, input.decoding);
    const log = logBatches(eventStore, input.batchSize, minimumCheckpoint(targets.map((t) => t.generation.checkpoint)), dataOf, leanReading(input.decoding, suspects))[Symbol.asyncIterator]();
    try {
      const next = async (): Promise<DecodedBatch | undefined> => {
        const batch = await log.next();
        return batch.done === true ? undefined : decodeBatch(batch.value, input.decoding, suspects, dataOf);
      };
      const applied = await applyLogSideBySide({
        pool,
        targets,
        parallelism: input.parallelism,
        ahead: 2,
        next,
        logger,
        onProgress: (events) => post({ kind: 'progress', events }),
        ...(input.foldEvents === undefined ? {} : { foldEvents: input.foldEvents }),
      });
      post({ kind: 'done', generations: applied.targets.map((t) => t.generation), events: applied.events });
    } finally {
      await log.return?.().catch(() => undefined);
    }
  } catch (error) {
    post({ kind: 'failed', error: serialized(error) });
  } finally {
    await eventStore.close();
    await pool.end();
  }
}

/**
 * The whole log for a replay from `start`: the store's stream where it has one (Postgres: COPY, a
 * few batches a statement), then readAll from where the stream ended up to the head, for what was
 * appended meanwhile. `dataOf`: the types whose data the reader needs (the stream may leave the
 * others' out; readAll gives every event's). `lean`: the stream may leave out each event's stream
 * name, revision and id (StreamAllOptions.lean); readAll gives them.
 */
export async function* logBatches(
  eventStore: EventStore,
  batchSize: number,
  start: LogPosition = logStart,
  dataOf?: ReadonlySet<string>,
  lean = false,
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

/** The replay's errors whose class the main thread acts on, and the fields they carry. */
const revivable: Readonly<Record<string, { prototype: Error; fields: readonly string[] }>> = {
  FoldedBatchesError: { prototype: FoldedBatchesError.prototype, fields: ['projection'] },
  ReplayPoisonError: { prototype: ReplayPoisonError.prototype, fields: ['deadLetter'] },
  ReplayDecodeError: { prototype: ReplayDecodeError.prototype, fields: ['event', 'reason'] },
};

function serialized(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const field of revivable[error.name]?.fields ?? []) fields[field] = (error as unknown as Record<string, unknown>)[field];
  if ('code' in error) fields.code = error.code;
  return { name: error.name, message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }), fields };
}

/** The thread's error as an instance of its class on this side (instanceof holds), with its fields. */
function revived(error: SerializedError): Error {
  const prototype = revivable[error.name]?.prototype ?? Error.prototype;
  const revivedError = Object.create(prototype) as Error;
  Object.defineProperty(revivedError, 'message', { value: error.message, writable: true, configurable: true });
  Object.defineProperty(revivedError, 'name', { value: error.name, writable: true, configurable: true });
  if (error.stack !== undefined) Object.defineProperty(revivedError, 'stack', { value: error.stack, writable: true, configurable: true });
  Object.assign(revivedError, error.fields);
  return revivedError;
}

