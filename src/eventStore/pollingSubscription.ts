import type { LogPosition, ReadAllResult, RecordedEvent } from './eventStore.js';
import type { Waker } from './wakeHub.js';

export type PollingSubscriptionOptions = {
  readonly from: LogPosition;
  readonly batchSize: number;
  readonly signal: AbortSignal;
  readonly readBatch: (from: LogPosition, maxCount: number) => Promise<ReadAllResult>;
  /** True while committed events wait behind an older transaction still in flight. */
  readonly hasPendingEvents: () => Promise<boolean>;
  /** Created before the first read, so that no wake-up during catch-up is lost. */
  readonly waker: () => Waker;
  /** The idle poll: a fallback when notifications wake the waker, the only clock when none do. */
  readonly pollIntervalMs: number;
  /** First retry delay while events are pending; doubles up to maxPendingRetryMs. */
  readonly pendingRetryMs?: number;
  /**
   * The longest retry delay while events are pending (default 1 000 ms, never above
   * pollIntervalMs). The horizon is the cluster's oldest transaction in flight, in any database:
   * a long one elsewhere holds our events back, and once it ends they must show within this bound,
   * not after a backoff that grew while it ran.
   */
  readonly maxPendingRetryMs?: number;
};

/**
 * Catch-up then live over readAll: reads in large batches until at the head, then waits for a
 * wake-up or the poll. A notification can arrive before an older, still-open transaction commits
 * (its events sort before the notified ones and hold them back), and that older transaction may
 * notify nothing: so while events are pending behind the horizon it keeps polling, backing off.
 */
export async function* pollingSubscription(options: PollingSubscriptionOptions): AsyncGenerator<readonly RecordedEvent[], void, undefined> {
  const { batchSize, signal, readBatch, hasPendingEvents, pollIntervalMs } = options;
  const maxPendingRetryMs = Math.min(options.maxPendingRetryMs ?? 1000, pollIntervalMs);
  const pendingRetryMs = Math.min(options.pendingRetryMs ?? 20, maxPendingRetryMs);
  const waker = options.waker();
  try {
    let position = options.from;
    let retryMs = pendingRetryMs;
    let prefetched: Promise<ReadAllResult> | undefined;
    while (!signal.aborted) {
      const batch = await (prefetched ?? readBatch(position, batchSize));
      prefetched = undefined;
      if (batch.events.length > 0) {
        position = batch.next;
        retryMs = pendingRetryMs;
        if (!batch.atHead) {
          // Catching up: the database reads the next batch while the consumer handles this one.
          prefetched = readBatch(position, batchSize);
          prefetched.catch(() => {});
        }
        yield batch.events;
        if (!batch.atHead) continue;
      }
      if (signal.aborted) return;
      if (await hasPendingEvents()) {
        await waker.wait(retryMs, signal);
        retryMs = Math.min(retryMs * 2, maxPendingRetryMs);
      } else {
        retryMs = pendingRetryMs;
        await waker.wait(pollIntervalMs, signal);
      }
    }
  } finally {
    waker.close();
  }
}
