import { Queue, UnrecoverableError, Worker, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { redactedRedisUrl } from '../config/redisUrl.js';
import { createRedisClient, isSentinelUrl, quitRedis, watchRedisOutages } from '../platform/redisConnection.js';
import {
  exportRetryPolicy,
  type ExportProcessor,
  type ExportQueue,
  type ExportQueueLogger,
  type ExportTask,
  type ExportWorker,
} from './exportQueue.js';

export type BullmqExportQueueOptions = {
  readonly redisUrl: string;
  readonly queueName: string;
  readonly logger: ExportQueueLogger;
  /** How long `enqueue` may take before it rejects, Redis reachable or not; default 2000. */
  readonly enqueueTimeoutMs?: number;
};

export type BullmqExportWorkerOptions = {
  readonly redisUrl: string;
  readonly queueName: string;
  readonly processor: ExportProcessor;
  /** Builds run at once by this worker (process). */
  readonly concurrency: number;
  readonly logger: ExportQueueLogger;
};

export const defaultEnqueueTimeoutMs = 2000;
/** Longest an enqueue waits for a replica to confirm the job (Sentinel only). */
const replicaWaitMs = 500;
const jobName = 'briefing-export';
const dayInSeconds = 24 * 60 * 60;
const maxReconnectDelayMs = 2000;
// How long a closing worker waits for BullMQ to record the last outcomes in a reachable Redis.
const closeGraceMs = 5000;

// Not strict: a field added by a newer API must not make an older worker fail the job.
const exportTaskSchema = z.object({ tenantId: z.string().min(1), exportId: z.string().min(1) });

/** The producer used by API processes: `enqueue` either stores the job in Redis or rejects within the timeout. */
export function createBullmqExportQueue(options: BullmqExportQueueOptions): ExportQueue {
  const { redisUrl, queueName, logger } = options;
  const timeoutMs = options.enqueueTimeoutMs ?? defaultEnqueueTimeoutMs;
  const client = createRedisClient(redisUrl, {
    // Commands are refused while disconnected instead of being buffered and sent after the
    // caller was told that enqueue failed (BullMQ's advice for producers behind HTTP).
    enableOfflineQueue: false,
    // Likewise, a command in flight when the connection dropped is not sent again on reconnect.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    retryStrategy: (times) => Math.min(times * 200, maxReconnectDelayMs),
  });
  const connection = watchConnection(client, logger, 'export queue (producer)', redisUrl);
  const untilReady = readinessOf(client);
  const queue = new Queue<ExportTask>(queueName, {
    connection: client,
    // BullMQ would otherwise hold every add (in its own promise, not the offline queue) until the
    // first connection is ready, then send it however late. `enqueue` does the waiting instead.
    skipWaitingForReady: true,
    // Both send a command at construction, which the not yet connected client refuses; the
    // version check failing would break the queue for good. Workers still check the version.
    skipVersionCheck: true,
    skipMetasUpdate: true,
  });
  // The connection's errors also arrive here; they are logged once per outage by watchConnection.
  queue.on('error', (err: Error) => connection.onError(err));

  const jobOptions = (task: ExportTask): JobsOptions => ({
    jobId: task.exportId,
    attempts: exportRetryPolicy.attempts,
    backoff: { type: 'exponential', delay: exportRetryPolicy.backoffMs },
    removeOnComplete: { age: dayInSeconds },
    removeOnFail: { age: 7 * dayInSeconds },
  });

  // Under Sentinel a job is acknowledged once a replica holds it too, so that the replica a
  // failover promotes has it (Sentinel promotes the replica furthest along). A replica that does
  // not confirm in time (down, far behind) does not fail the request: the job is on the master,
  // its row in Postgres, and the maintenance queues it again should a failover lose it.
  const replicated = isSentinelUrl(redisUrl);
  const confirmReplicated = async (ms: number): Promise<void> => {
    const replicas = await client.wait(1, Math.max(1, ms));
    if (replicas < 1) logger.warn({ role: 'export queue (producer)', queue: queueName }, `export queue: no replica confirmed the job within ${ms} ms; it is on the master only`);
  };

  let closed = false;
  return {
    kind: 'bullmq',
    enqueue: async (task) => {
      if (closed) {
        throw new Error('the export queue is closed');
      }
      assertUsableJobId(task.exportId);
      const deadline = Date.now() + timeoutMs;
      if (!(await untilReady(timeoutMs))) {
        throw new Error(`export queue: Redis not reachable within ${timeoutMs} ms (status ${client.status})`);
      }
      // Nothing was sent yet; from here each command is on a live socket or refused at once.
      const adding = (async () => {
        // BullMQ ignores an add whose id it still keeps as finished: a job requeued by the
        // maintenance (its row says it was never built) must replace that record.
        const previous = await queue.getJob(task.exportId);
        if (previous !== undefined && ((await previous.isCompleted()) || (await previous.isFailed()))) await previous.remove();
        await queue.add(jobName, { tenantId: task.tenantId, exportId: task.exportId }, jobOptions(task));
        if (replicated) await confirmReplicated(Math.min(replicaWaitMs, deadline - Date.now()));
      })();
      await withTimeout(adding, deadline - Date.now(), `export queue: Redis did not confirm the job within ${timeoutMs} ms`);
    },
    close: async () => {
      closed = true;
      connection.closing();
      await queue.close();
      await quitRedis(client);
    },
  };
}

/** BullMQ's Worker with a way out of a close that cannot finish for want of Redis. */
class ExportJobWorker extends Worker<unknown> {
  /** Stops the timers a finished close would have stopped (lock renewal, stalled checks), so the process can exit. */
  async abandon(): Promise<void> {
    await this.lockManager.close();
    await this.pause(true);
  }
}

/** A consumer: runs `processor` for each job, BullMQ retrying a throwing build per `exportRetryPolicy`. */
export function startBullmqExportWorker(options: BullmqExportWorkerOptions): ExportWorker {
  const { redisUrl, queueName, processor, concurrency, logger } = options;
  // Null: a worker's commands wait for Redis to come back (BullMQ requires it for blocking connections).
  const client = createRedisClient(redisUrl, {
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(times * 200, maxReconnectDelayMs),
  });
  const connection = watchConnection(client, logger, 'export worker', redisUrl);
  // Errors already logged by the job wrapper, so that the 'failed' event does not log them again.
  const logged = new WeakSet<Error>();

  const buildJob = async (job: Job<unknown>): Promise<void> => {
    const parsed = exportTaskSchema.safeParse(job.data);
    if (!parsed.success) {
      const err = new UnrecoverableError('export job has invalid data');
      logged.add(err);
      logger.error({ queue: queueName, jobId: job.id, issues: parsed.error.issues }, 'export job has invalid data; failed without retry');
      throw err;
    }
    const task = parsed.data;
    // attemptsMade counts the runs that ended (failed) before this one; stalled restarts do not count.
    const allowed = job.opts.attempts ?? 1;
    const number = job.attemptsMade + 1;
    const final = number >= allowed;
    try {
      await processor(task, { number, final });
    } catch (thrown: unknown) {
      // BullMQ needs an Error to record a failure.
      const err = thrown instanceof Error ? thrown : new Error(String(thrown));
      logged.add(err);
      const context = { tenantId: task.tenantId, exportId: task.exportId, attempt: number, attempts: allowed, err };
      if (final) {
        logger.error(context, 'export build failed on its last attempt');
      } else {
        logger.warn(context, 'export build failed; BullMQ retries it');
      }
      throw err;
    }
  };

  // The builds under way, so that close can wait for them even when BullMQ's own close cannot finish.
  const building = new Set<Promise<void>>();
  const runJob = (job: Job<unknown>): Promise<void> => {
    const build = buildJob(job);
    building.add(build);
    const forget = (): void => void building.delete(build);
    build.then(forget, forget);
    return build;
  };
  const drained = async (): Promise<void> => {
    while (building.size > 0) {
      await Promise.allSettled([...building]);
    }
  };

  const worker = new ExportJobWorker(queueName, runJob, { connection: client, concurrency, autorun: true });
  worker.on('error', (err: Error) => connection.onError(err));
  // Failures that did not come from buildJob, e.g. a job whose worker died once too often (stalled).
  worker.on('failed', (job: Job<unknown> | undefined, err: Error) => {
    if (!logged.has(err)) {
      logger.error({ queue: queueName, jobId: job?.id, err }, 'export job failed outside the build');
    }
  });

  return {
    close: async () => {
      connection.closing();
      // BullMQ 6.7's graceful close never returns when Redis is unreachable as it starts: it waits
      // for its blocking connection to end, which a reconnecting ioredis client never does. No job
      // can be taken without Redis, so then the builds are waited for here and BullMQ is forced.
      const closing = worker.close(client.status !== 'ready');
      await drained();
      if (!(await settlesWithin(closing, closeGraceMs))) {
        // Redis went away during the close: what BullMQ still had to record cannot be recorded.
        logger.warn({ queue: queueName, role: 'export worker' }, 'export worker closed without reaching Redis');
        await worker.abandon();
      }
      await quitRedis(client);
    },
  };
}

/** BullMQ refuses custom ids containing ':' and ids that read as integers (its own ids are integers). */
function assertUsableJobId(exportId: string): void {
  if (exportId === '' || exportId.includes(':') || /^\d+$/.test(exportId)) {
    throw new Error(`export id cannot be used as a BullMQ job id: ${JSON.stringify(exportId)}`);
  }
}

/**
 * Waits for the client to be ready, for at most ms. One pair of listeners serves all waiters (an
 * API under load may have many enqueues waiting at once); a waiter that gives up is forgotten.
 */
function readinessOf(client: Redis): (ms: number) => Promise<boolean> {
  const waiters = new Set<(ready: boolean) => void>();
  const settleAll = (ready: boolean): void => {
    for (const settle of [...waiters]) {
      settle(ready);
    }
  };
  client.on('ready', () => settleAll(true));
  client.on('end', () => settleAll(false));
  return (ms) => {
    if (client.status === 'ready') {
      return Promise.resolve(true);
    }
    if (client.status === 'end' || ms <= 0) {
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      const settle = (ready: boolean): void => {
        clearTimeout(timer);
        waiters.delete(settle);
        resolve(ready);
      };
      const timer = setTimeout(() => settle(false), ms);
      waiters.add(settle);
    });
  };
}

/** Whether promise settles within ms; it is never left to reject unhandled. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = promise.then(
    () => true,
    () => true,
  );
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([settled, expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  // The loser must not surface as an unhandled rejection.
  promise.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

type ConnectionWatch = {
  /** For the errors BullMQ forwards: outage noise is folded into one warning, anything else is logged. */
  onError(err: Error): void;
  /** Stops logging: errors and closes during shutdown are expected. */
  closing(): void;
};

/** Logs a connection outage once (warn) and its end (info), however many reconnects fail meanwhile. */
function watchConnection(client: Redis, logger: ExportQueueLogger, role: string, redisUrl: string): ConnectionWatch {
  let shuttingDown = false;
  const outages = watchRedisOutages(client, {
    down: (err) => logger.warn({ role, err, setting: 'REDIS_URL' }, `${role}: Redis unreachable at REDIS_URL=${redactedRedisUrl(redisUrl)}; reconnecting in the background`),
    up: (afterOutage) => {
      if (afterOutage) logger.info({ role }, `${role}: Redis reachable again`);
    },
  });

  return {
    onError: (err) => {
      if (shuttingDown || isConnectionError(err)) {
        return;
      }
      logger.warn({ role, err }, `${role}: BullMQ reported an error`);
    },
    closing: () => {
      shuttingDown = true;
      outages.stop();
    },
  };
}

const connectionErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function isConnectionError(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return (
    (typeof code === 'string' && connectionErrorCodes.has(code)) ||
    err.name === 'MaxRetriesPerRequestError' ||
    /Connection is closed|Stream isn't writeable|Command timed out|connect ETIMEDOUT/.test(err.message)
  );
}
