import type { Logger } from '../platform/logger.js';

/** What the queue carries: the job's key. Everything else is read from the job row. */
export type ExportTask = { readonly tenantId: string; readonly exportId: string };

/** Which run of a task this is: 1 for the first, up to `exportRetryPolicy.attempts`. */
export type ExportAttempt = { readonly number: number; readonly final: boolean };

/**
 * Builds one export. It records its own outcome on the job row (building, ready, or failed with
 * `processing_error`) and throws when the build failed, so that the queue tries it again.
 */
export type ExportProcessor = (task: ExportTask, attempt: ExportAttempt) => Promise<void>;

/** Both queue modes retry a failed build alike: three runs in all, 1 s then 2 s apart. */
export const exportRetryPolicy = { attempts: 3, backoffMs: 1000 } as const;

/** Delay before retry number `attemptsMade` (1 after the first failure): exponential from backoffMs. */
export function retryDelayMs(attemptsMade: number, baseMs: number = exportRetryPolicy.backoffMs): number {
  return baseMs * 2 ** Math.max(0, attemptsMade - 1);
}

/** The producer side, used by the API. */
export interface ExportQueue {
  readonly kind: 'bullmq' | 'in-process';
  /** Resolves once the task is durably queued; rejects (quickly) when it cannot be. */
  enqueue(task: ExportTask): Promise<void>;
  close(): Promise<void>;
}

/** A running consumer; `close` lets the builds under way finish. */
export interface ExportWorker {
  close(): Promise<void>;
}

export type ExportQueueLogger = Pick<Logger, 'info' | 'warn' | 'error'>;
