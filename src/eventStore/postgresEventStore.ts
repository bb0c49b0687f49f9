import type { DatabasePool } from 'slonik';
import type { DatabaseKind } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import { appendInTransaction, eventsChannel, needsTransaction } from './appendInTransaction.js';
import type { AppendResult, EventStore, LogPosition, RecordedEvent, StreamAllOptions, StreamWrite, SubscribeOptions } from './eventStore.js';
import { pollingSubscription } from './pollingSubscription.js';
import { createPostgresListener } from './postgresListener.js';
import { streamLog } from './postgresLogStream.js';
import { hasEventsBeyondHorizon, readHead, readLog, readStreamEvents, streamNamesWithPrefix } from './postgresLogQueries.js';
import { createWakeHub } from './wakeHub.js';

export type PostgresEventStoreOptions = {
  readonly pool: DatabasePool;
  readonly kind: DatabaseKind;
  readonly logger: Logger;
  /** For the LISTEN connection (real Postgres). */
  readonly connectionUri: string;
  /** Idle poll of subscriptions: the fallback on Postgres (500 ms), the only clock on PGlite (150 ms). */
  readonly pollIntervalMs?: number;
};

const defaultBatchSize = 1000;

/**
 * The event log in the `events` table. The pool belongs to the caller: close() stops this store's
 * subscriptions and listener, not the pool.
 */
export function createPostgresEventStore(options: PostgresEventStoreOptions): EventStore {
  const { pool, kind, logger, connectionUri } = options;
  const notify = kind === 'postgres';
  const pollIntervalMs = options.pollIntervalMs ?? (kind === 'postgres' ? 500 : 150);
  const closing = new AbortController();
  // In-process appends wake this store's subscribers at once; other processes' appends arrive by
  // notification (Postgres) or by the poll (PGlite).
  const wakeHub = createWakeHub();
  const listener = notify
    ? createPostgresListener({ connectionUri, channel: eventsChannel, logger, onNotification: () => wakeHub.wakeAll() })
    : undefined;

  const appendMany = async (writes: readonly StreamWrite[]): Promise<readonly AppendResult[]> => {
    if (writes.length === 0) return [];
    const results = needsTransaction(writes)
      ? await pool.transaction((transaction) => appendInTransaction(transaction, writes, { notify }))
      : await appendInTransaction(pool, writes, { notify });
    if (writes.some((write) => write.events.length > 0)) wakeHub.wakeAll();
    return results;
  };

  async function* subscription(subscribeOptions: SubscribeOptions): AsyncGenerator<readonly RecordedEvent[], void, undefined> {
    const signal = subscribeOptions.signal ? AbortSignal.any([subscribeOptions.signal, closing.signal]) : closing.signal;
    if (signal.aborted) return;
    listener?.retain();
    try {
      yield* pollingSubscription({
        from: subscribeOptions.from,
        batchSize: subscribeOptions.batchSize ?? defaultBatchSize,
        signal,
        readBatch: (from, maxCount) => readLog(pool, from, maxCount),
        hasPendingEvents: () => hasEventsBeyondHorizon(pool),
        waker: () => wakeHub.waker(),
        pollIntervalMs,
      });
    } finally {
      listener?.release();
    }
  }

  return {
    kind: 'postgres',
    append: async (streamName, events, expectedRevision) => {
      const [result] = await appendMany([{ streamName, events, expectedRevision }]);
      if (!result) throw new Error('append returned no result');
      return result;
    },
    appendMany,
    readStream: (streamName) => readStreamEvents(pool, streamName),
    readAll: (from, maxCount) => readLog(pool, from, maxCount),
    readAllOn: (db, from, maxCount) => readLog(db, from, maxCount),
    // PGlite is one session: a stream held open would stall every other connection.
    ...(kind === 'postgres' ? { streamAll: (from: LogPosition, batchSize: number, options?: StreamAllOptions) => streamLog(connectionUri, from, batchSize, options) } : {}),
    subscribe: (subscribeOptions) => subscription(subscribeOptions),
    head: () => readHead(pool),
    streamNames: (prefix) => streamNamesWithPrefix(pool, prefix),
    close: async () => {
      closing.abort();
      await listener?.close();
    },
  };
}
