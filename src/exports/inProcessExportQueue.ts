import {
  exportRetryPolicy,
  retryDelayMs,
  type ExportProcessor,
  type ExportQueue,
  type ExportQueueLogger,
  type ExportTask,
} from './exportQueue.js';

export type InProcessExportQueueOptions = {
  readonly processor: ExportProcessor;
  readonly logger: ExportQueueLogger;
  /** Builds run at once in this process; default 1. */
  readonly concurrency?: number;
  /** Default `exportRetryPolicy`, as with BullMQ; tests pass a short backoff. */
  readonly retry?: { readonly attempts: number; readonly backoffMs: number };
};

export type InProcessExportQueue = ExportQueue & {
  readonly kind: 'in-process';
  /** Resolves once nothing is queued, running or waiting for a retry (for tests; production never needs it). */
  whenIdle(): Promise<void>;
};

type Run = { readonly task: ExportTask; readonly attempt: number };

/**
 * A queue that is its own worker, for single-process deployments without Redis. Nothing is durable:
 * tasks still queued at `close` (or lost with the process) are recovered from the job rows at start.
 */
export function createInProcessExportQueue(options: InProcessExportQueueOptions): InProcessExportQueue {
  const { processor, logger } = options;
  const concurrency = options.concurrency ?? 1;
  const { attempts, backoffMs } = options.retry ?? exportRetryPolicy;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be an integer >= 1, got ${concurrency}`);
  }
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new RangeError(`retry.attempts must be an integer >= 1, got ${attempts}`);
  }

  const waiting: Run[] = [];
  const running = new Set<Promise<void>>();
  const retryTimers = new Set<NodeJS.Timeout>();
  // Every exportId queued, running or waiting for a retry: a second enqueue of it is a no-op, like a BullMQ jobId.
  const known = new Set<string>();
  let idleWaiters: Array<() => void> = [];
  let closed = false;

  const isIdle = (): boolean => waiting.length === 0 && running.size === 0 && retryTimers.size === 0;
  const settleIdle = (): void => {
    if (!isIdle()) {
      return;
    }
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) {
      resolve();
    }
  };

  const pump = (): void => {
    while (!closed && running.size < concurrency) {
      const next = waiting.shift();
      if (next === undefined) {
        break;
      }
      const execution = execute(next);
      running.add(execution);
      void execution.finally(() => {
        running.delete(execution);
        pump();
        settleIdle();
      });
    }
  };

  const execute = async ({ task, attempt }: Run): Promise<void> => {
    const final = attempt >= attempts;
    try {
      await processor(task, { number: attempt, final });
      known.delete(task.exportId);
      return;
    } catch (err: unknown) {
      const context = { tenantId: task.tenantId, exportId: task.exportId, attempt, attempts, err };
      if (final || closed) {
        known.delete(task.exportId);
        if (final) {
          logger.error(context, 'export build failed on its last attempt');
        } else {
          logger.warn(context, 'export build failed while the queue was closing; not retried');
        }
        return;
      }
      const delayMs = retryDelayMs(attempt, backoffMs);
      logger.warn({ ...context, retryInMs: delayMs }, 'export build failed; retrying');
      const timer = setTimeout(() => {
        retryTimers.delete(timer);
        waiting.push({ task, attempt: attempt + 1 });
        pump();
      }, delayMs);
      retryTimers.add(timer);
    }
  };

  return {
    kind: 'in-process',
    enqueue: async (task) => {
      if (closed) {
        throw new Error('the export queue is closed');
      }
      if (known.has(task.exportId)) {
        return;
      }
      known.add(task.exportId);
      // A copy, so a caller mutating its object cannot change a queued task.
      waiting.push({ task: { tenantId: task.tenantId, exportId: task.exportId }, attempt: 1 });
      // Started on a later turn of the event loop: the caller's own follow-up (such as committing
      // the job row) runs before any build work, as much as it would with a remote worker.
      setImmediate(pump);
    },
    whenIdle: () => (isIdle() ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    close: async () => {
      closed = true;
      for (const timer of retryTimers) {
        clearTimeout(timer);
      }
      retryTimers.clear();
      for (const dropped of waiting.splice(0)) {
        known.delete(dropped.task.exportId);
      }
      await Promise.all(running);
      settleIdle();
    },
  };
}
