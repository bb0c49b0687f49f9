import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

type QueuedMessage = {
  readonly handlerId: number;
  readonly message: Uint8Array;
  readonly resolve: (bytes: number) => void;
  readonly reject: (error: unknown) => void;
  readonly onData: (data: Uint8Array) => void;
};

type SessionDatabase = {
  isInTransaction(): boolean;
  runExclusive<T>(work: () => Promise<T>): Promise<T>;
  execProtocolRawStream(message: Uint8Array, options: { onRawData: (data: Uint8Array) => void }): Promise<unknown>;
};

type QueryQueue = {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: SessionDatabase;
  processQueue(): Promise<void>;
  clearQueueForHandler(handlerId: number): void;
};

/** Frontend messages of an extended-query batch; the batch ends with Sync ('S'). */
const extendedQueryMessages = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]); // P B D E C H

function isQueryQueue(value: unknown): value is QueryQueue {
  if (value === null || typeof value !== 'object') return false;
  const queue = value as Partial<Record<keyof QueryQueue, unknown>>;
  return Array.isArray(queue.queue) && typeof queue.processQueue === 'function' && typeof queue.clearQueueForHandler === 'function' && typeof queue.db === 'object';
}

/**
 * pglite-socket serves every connection from one PGlite session and interleaves their protocol
 * messages one by one, keeping a connection's messages together only inside a transaction. An
 * extended-query batch (Parse, Bind, Execute … Sync) outside a transaction can then be cut by
 * another connection's Parse, which replaces the unnamed statement ("unnamed prepared statement
 * does not exist", or worse, the other statement's rows); and one failed message stops the queue
 * for good (electric-sql/pglite#1046, open). This replaces the queue's scheduling so that a batch
 * runs to its Sync before another connection's message, and a failure is reported to its
 * connection without stopping the queue.
 */
export function keepExtendedQueryBatchesTogether(server: PGLiteSocketServer): void {
  const candidate: unknown = (server as unknown as { queryQueue?: unknown }).queryQueue;
  if (!isQueryQueue(candidate)) {
    throw new Error('@electric-sql/pglite-socket has changed its query queue; review src/platform/pgliteQueueAffinity.ts');
  }
  const queue = candidate;
  let batchOwner: number | null = null;

  queue.processQueue = async () => {
    if (queue.processing || queue.queue.length === 0) return;
    queue.processing = true;
    try {
      while (queue.queue.length > 0) {
        const owner = batchOwner ?? (queue.db.isInTransaction() ? queue.lastHandlerId : null);
        const index = owner === null ? 0 : queue.queue.findIndex((item) => item.handlerId === owner);
        // The owner's next message has not arrived yet: its enqueue starts processing again.
        if (index === -1) break;
        const [item] = queue.queue.splice(index, 1);
        if (!item) break;
        let bytes = 0;
        try {
          await queue.db.runExclusive(() =>
            queue.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
          item.resolve(bytes);
        } catch (error) {
          item.reject(error);
        }
        queue.lastHandlerId = item.handlerId;
        const type = item.message[0];
        batchOwner = type !== undefined && extendedQueryMessages.has(type) ? item.handlerId : null;
      }
    } finally {
      queue.processing = false;
    }
  };

  const clearQueueForHandler = queue.clearQueueForHandler.bind(queue);
  queue.clearQueueForHandler = (handlerId) => {
    clearQueueForHandler(handlerId);
    if (batchOwner === handlerId) {
      batchOwner = null;
      void queue.processQueue();
    }
  };
}
