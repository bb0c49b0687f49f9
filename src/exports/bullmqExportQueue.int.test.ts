import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { redisProxy, refusingPort } from '../../test/support/redisProxy.js';
import { capturingLogger as captureLogs, logLevels } from '../../test/support/capturingLogger.js';
import { eventually } from '../../test/support/eventually.js';
import { services, testRedisUrl } from '../../test/support/services.js';
import { pace } from '../../test/support/pace.js';
import { createLogger } from '../platform/logger.js';
import { createBullmqExportQueue, startBullmqExportWorker } from './bullmqExportQueue.js';
import type { ExportAttempt, ExportProcessor, ExportQueue, ExportTask, ExportWorker } from './exportQueue.js';

type LogLine = { readonly level: number; readonly msg: string; readonly exportId?: string; readonly attempt?: number };



/** Unique per test, so parallel test files sharing one Redis never take each other's jobs. */
function uniqueQueueName(): string {
  return `test-exports-${randomBytes(6).toString('hex')}`;
}

function task(): ExportTask {
  return { tenantId: 'tenant-a', exportId: randomUUID() };
}

type Run = { readonly exportId: string; readonly attempt: ExportAttempt; readonly at: number };

describe.runIf(services.redis)('the BullMQ export queue on real Redis', () => {
  let admin: Redis;
  const queueNames: string[] = [];
  const closables: Array<ExportQueue | ExportWorker> = [];

  function track<T extends ExportQueue | ExportWorker>(closable: T): T {
    closables.push(closable);
    return closable;
  }

  function newQueueName(): string {
    const name = uniqueQueueName();
    queueNames.push(name);
    return name;
  }

  /** A plain BullMQ queue on the admin connection, to look at jobs and clean up. */
  function inspect(queueName: string): Queue {
    return new Queue(queueName, { connection: admin });
  }

  beforeAll(() => {
    admin = new Redis(testRedisUrl, { maxRetriesPerRequest: null });
  });

  afterEach(async () => {
    await Promise.all(closables.splice(0).map((closable) => closable.close()));
    for (const name of queueNames.splice(0)) {
      const queue = inspect(name);
      await queue.obliterate({ force: true });
      await queue.close();
      expect(await admin.keys(`bull:${name}:*`)).toEqual([]);
    }
  });

  afterAll(async () => {
    await admin.quit();
  });

  function recordingProcessor(behaviour: (run: Run) => Promise<void> = async () => {}): { processor: ExportProcessor; runs: Run[] } {
    const runs: Run[] = [];
    return {
      runs,
      processor: async (t, attempt) => {
        const run = { exportId: t.exportId, attempt, at: Date.now() };
        runs.push(run);
        await behaviour(run);
      },
    };
  }

  test('an enqueued export is built by a worker, on attempt 1', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    expect(queue.kind).toBe('bullmq');
    const seen: ExportTask[] = [];
    const { processor, runs } = recordingProcessor();
    track(
      startBullmqExportWorker({
        redisUrl: testRedisUrl,
        queueName,
        concurrency: 1,
        logger: log.logger,
        processor: async (t, attempt) => {
          seen.push(t);
          await processor(t, attempt);
        },
      }),
    );

    const first = task();
    await queue.enqueue(first);
    const job = await inspect(queueName).getJob(first.exportId);
    expect(job?.opts).toMatchObject({
      attempts: 3,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 86_400 },
      removeOnFail: { age: 604_800 },
    });

    await vi.waitFor(() => expect(runs).toHaveLength(1), { timeout: 5000 });
    expect(seen).toEqual([first]);
    expect(runs[0]?.attempt).toEqual({ number: 1, final: false });
    await vi.waitFor(async () => expect(await inspect(queueName).getJobState(first.exportId)).toBe('completed'));
    expect(log.at(logLevels.warn)).toEqual([]);
    expect(log.at(logLevels.error)).toEqual([]);
  });

  test('a build that throws once is retried about a second later and succeeds on attempt 2', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    const { processor, runs } = recordingProcessor(async (run) => {
      if (run.attempt.number === 1) {
        throw new Error('first build failed');
      }
    });
    track(startBullmqExportWorker({ redisUrl: testRedisUrl, queueName, concurrency: 1, logger: log.logger, processor }));

    const t = task();
    await queue.enqueue(t);
    await vi.waitFor(() => expect(runs).toHaveLength(2), { timeout: 8000 });
    expect(runs.map((run) => run.attempt)).toEqual([
      { number: 1, final: false },
      { number: 2, final: false },
    ]);
    const [firstRun, secondRun] = runs;
    expect((secondRun?.at ?? 0) - (firstRun?.at ?? 0)).toBeGreaterThanOrEqual(950);
    await vi.waitFor(async () => expect(await inspect(queueName).getJobState(t.exportId)).toBe('completed'));
    expect(log.at(logLevels.warn)).toMatchObject([{ exportId: t.exportId, attempt: 1 }]);
    expect(log.at(logLevels.error)).toEqual([]);
  });

  test('a build that keeps failing runs three times, the last one final, then the job fails', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    const { processor, runs } = recordingProcessor(async () => {
      throw new Error('broken');
    });
    track(startBullmqExportWorker({ redisUrl: testRedisUrl, queueName, concurrency: 1, logger: log.logger, processor }));

    const t = task();
    await queue.enqueue(t);
    await vi.waitFor(async () => expect(await inspect(queueName).getJobState(t.exportId)).toBe('failed'), { timeout: 10_000 });
    expect(runs.map((run) => run.attempt)).toEqual([
      { number: 1, final: false },
      { number: 2, final: false },
      { number: 3, final: true },
    ]);
    // 1 s, then 2 s apart.
    const gaps = runs.slice(1).map((run, i) => run.at - (runs[i]?.at ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    expect(gaps[1]).toBeGreaterThanOrEqual(1950);
    expect(log.at(logLevels.warn).map((line) => line.attempt)).toEqual([1, 2]);
    expect(log.at(logLevels.error)).toMatchObject([{ exportId: t.exportId, attempt: 3 }]);
    // Failed is final: no retry is left waiting or delayed.
    expect((await inspect(queueName).getJob(t.exportId))?.attemptsMade).toBe(3);
    expect(await inspect(queueName).getJobCounts('wait', 'delayed', 'active')).toEqual({ wait: 0, delayed: 0, active: 0 });
  }, 20_000);

  test('the same export enqueued twice is one job (the export id is the job id)', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    const t = task();
    await queue.enqueue(t);
    await queue.enqueue(t);
    expect(await inspect(queueName).getJobCounts('wait')).toEqual({ wait: 1 });

    const { processor, runs } = recordingProcessor();
    track(startBullmqExportWorker({ redisUrl: testRedisUrl, queueName, concurrency: 1, logger: log.logger, processor }));
    await vi.waitFor(async () => expect(await inspect(queueName).getJobState(t.exportId)).toBe('completed'), { timeout: 5000 });
    // The one job is completed and nothing else is queued: the second enqueue made no job of its own.
    expect(await inspect(queueName).getJobCounts('wait', 'delayed', 'active', 'completed')).toEqual({ wait: 0, delayed: 0, active: 0, completed: 1 });
    expect(runs).toHaveLength(1);
  });

  test('an export enqueued again after its job finished is built again (the maintenance requeues jobs its rows say were never built)', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    const { processor, runs } = recordingProcessor();
    track(startBullmqExportWorker({ redisUrl: testRedisUrl, queueName, concurrency: 1, logger: log.logger, processor }));
    const t = task();
    await queue.enqueue(t);
    await vi.waitFor(async () => expect(await inspect(queueName).getJobState(t.exportId)).toBe('completed'), { timeout: 5000 });
    await queue.enqueue(t);
    await vi.waitFor(() => expect(runs).toHaveLength(2), { timeout: 5000 });
    expect(runs.map((run) => run.attempt.number)).toEqual([1, 1]);
  });

  test('two workers on one queue build every job exactly once', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    const tasks = Array.from({ length: 24 }, () => task());
    await Promise.all(tasks.map((t) => queue.enqueue(t)));

    const byWorker: Record<'a' | 'b', string[]> = { a: [], b: [] };
    const running = new Set<string>();
    let overlapped = false;
    for (const name of ['a', 'b'] as const) {
      track(
        startBullmqExportWorker({
          redisUrl: testRedisUrl,
          queueName,
          concurrency: 2,
          logger: log.logger,
          processor: async (t) => {
            overlapped ||= running.has(t.exportId);
            running.add(t.exportId);
            byWorker[name].push(t.exportId);
            await pace(25); // the build's work
            running.delete(t.exportId);
          },
        }),
      );
    }

    // Every job completed, none left: no build can come after this.
    await eventually(async () => expect(await inspect(queueName).getJobCounts('wait', 'delayed', 'active', 'completed')).toEqual({ wait: 0, delayed: 0, active: 0, completed: tasks.length }));
    const all = [...byWorker.a, ...byWorker.b];
    expect(all).toHaveLength(tasks.length);
    expect(new Set(all)).toEqual(new Set(tasks.map((t) => t.exportId)));
    expect(overlapped).toBe(false);
    expect(byWorker.a.length).toBeGreaterThan(0);
    expect(byWorker.b.length).toBeGreaterThan(0);
    expect(await inspect(queueName).getJobCounts('completed')).toEqual({ completed: tasks.length });
  });

  test('a job with invalid data fails at once without reaching the processor or being retried', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const { processor, runs } = recordingProcessor();
    track(startBullmqExportWorker({ redisUrl: testRedisUrl, queueName, concurrency: 1, logger: log.logger, processor }));

    const raw = inspect(queueName);
    await raw.add('briefing-export', { tenantId: 'tenant-a' }, { jobId: 'bad-job', attempts: 3, backoff: { type: 'exponential', delay: 1000 } });
    await vi.waitFor(async () => expect(await raw.getJobState('bad-job')).toBe('failed'), { timeout: 5000 });
    const job = await raw.getJob('bad-job');
    expect(job?.attemptsMade).toBe(1);
    expect(job?.failedReason).toMatch(/invalid data/);
    await raw.close();
    expect(runs).toEqual([]);
    expect(log.at(logLevels.error)).toHaveLength(1);
  });

  test('close waits for the build under way, which completes', async () => {
    const queueName = newQueueName();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    let release = (): void => {};
    const { processor, runs } = recordingProcessor(() => new Promise<void>((resolve) => (release = resolve)));
    const worker = startBullmqExportWorker({ redisUrl: testRedisUrl, queueName, concurrency: 1, logger: log.logger, processor });

    const t = task();
    await queue.enqueue(t);
    await vi.waitFor(() => expect(runs).toHaveLength(1), { timeout: 5000 });
    // The build ends only once the close is under way; the close must end after it.
    const order: string[] = [];
    const closing = worker.close().then(() => order.push('closed'));
    setImmediate(() => {
      order.push('build released');
      release();
    });
    await closing;
    expect(order).toEqual(['build released', 'closed']);
    expect(await inspect(queueName).getJobState(t.exportId)).toBe('completed');

    // A closed worker takes nothing more: a new worker on the queue builds the next job, the closed one never sees it.
    const next = task();
    await queue.enqueue(next);
    const successor = recordingProcessor();
    track(startBullmqExportWorker({ redisUrl: testRedisUrl, queueName, concurrency: 1, logger: log.logger, processor: successor.processor }));
    await eventually(async () => expect(await inspect(queueName).getJobState(next.exportId)).toBe('completed'));
    expect(successor.runs.map((run) => run.exportId)).toEqual([next.exportId]);
    expect(runs).toHaveLength(1);
  });

  test('close during a Redis outage still waits for the build under way, then returns', async () => {
    const queueName = newQueueName();
    const proxy = await redisProxy();
    await proxy.start();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    let release = (): void => {};
    let finished = false;
    const { processor, runs } = recordingProcessor(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
    });
    const worker = startBullmqExportWorker({ redisUrl: proxy.url, queueName, concurrency: 1, logger: log.logger, processor });
    try {
      await queue.enqueue(task());
      await vi.waitFor(() => expect(runs).toHaveLength(1), { timeout: 5000 });
      await proxy.stop();
      await vi.waitFor(() => expect(log.at(logLevels.warn)).toHaveLength(1));

      const order: string[] = [];
      const closing = worker.close().then(() => order.push(finished ? 'closed after the build' : 'closed before the build'));
      setImmediate(() => {
        order.push('build released');
        release();
      });
      await closing;
      expect(order).toEqual(['build released', 'closed after the build']);
    } finally {
      await worker.close();
      await proxy.stop();
    }
  }, 30_000);

  test('when Redis goes away enqueue rejects quickly and nothing is delivered late; it works again once Redis is back', async () => {
    const queueName = newQueueName();
    const proxy = await redisProxy();
    await proxy.start();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: proxy.url, queueName, logger: log.logger }));
    try {
      const before = task();
      await queue.enqueue(before);
      expect(await inspect(queueName).getJobState(before.exportId)).toBe('waiting');

      await proxy.stop();
      const refused = task();
      await expect(queue.enqueue(refused)).rejects.toThrow();
      await vi.waitFor(() => expect(log.at(logLevels.warn)).toHaveLength(1));

      // Still refused a while later, and still a single warning for the whole outage.
      const refusedLater = task();
      await expect(queue.enqueue(refusedLater)).rejects.toThrow();
      expect(log.at(logLevels.warn)).toHaveLength(1);

      await proxy.start();
      const after = task();
      await vi.waitFor(() => queue.enqueue(after), { timeout: 8000, interval: 200 });
      expect(await inspect(queueName).getJobState(after.exportId)).toBe('waiting');
      await vi.waitFor(() => expect(log.at(logLevels.info)).toHaveLength(1));

      // The refused exports never reached Redis, not even after the reconnect: the connection sends in
      // order, so a refused enqueue resent on reconnect would have landed before \`after\`, which is there.
      expect(await inspect(queueName).getJob(refused.exportId)).toBeUndefined();
      expect(await inspect(queueName).getJob(refusedLater.exportId)).toBeUndefined();
      expect(await inspect(queueName).getJobCounts('wait')).toEqual({ wait: 2 });
    } finally {
      await queue.close();
      await proxy.stop();
    }
  }, 30_000);

  test('a worker survives Redis going away and builds jobs again once it is back', async () => {
    const queueName = newQueueName();
    const proxy = await redisProxy();
    await proxy.start();
    const log = captureLogs<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: testRedisUrl, queueName, logger: log.logger }));
    const { processor, runs } = recordingProcessor();
    const worker = startBullmqExportWorker({ redisUrl: proxy.url, queueName, concurrency: 1, logger: log.logger, processor });
    try {
      await queue.enqueue(task());
      await vi.waitFor(() => expect(runs).toHaveLength(1), { timeout: 5000 });

      await proxy.stop();
      await vi.waitFor(() => expect(log.at(logLevels.warn)).toHaveLength(1));
      const whileAway = task();
      await queue.enqueue(whileAway);
      expect(await inspect(queueName).getJobState(whileAway.exportId)).toBe('waiting');
      expect(runs).toHaveLength(1);
      expect(log.at(logLevels.warn)).toHaveLength(1);

      await proxy.start();
      await vi.waitFor(() => expect(runs).toHaveLength(2), { timeout: 10_000 });
      expect(log.at(logLevels.info)).toHaveLength(1);
      expect(log.at(logLevels.error)).toEqual([]);
    } finally {
      await worker.close();
      await proxy.stop();
    }
  }, 30_000);
});

describe('the BullMQ export queue when Redis is unreachable', () => {
  const queues: ExportQueue[] = [];

  afterEach(async () => {
    await Promise.all(queues.splice(0).map((queue) => queue.close()));
  });

  test('enqueue rejects within the timeout, warning once, and closing stops the reconnects quietly', async () => {
    const log = captureLogs<LogLine>();
    const down = await redisProxy();
    const queue = createBullmqExportQueue({ redisUrl: down.url, queueName: uniqueQueueName(), logger: log.logger });
    queues.push(queue);

    const started = Date.now();
    await expect(queue.enqueue(task())).rejects.toThrow(/not reachable within 2000 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    await expect(queue.enqueue(task())).rejects.toThrow(/not reachable/);
    expect(log.at(logLevels.warn)).toHaveLength(1);

    await queue.close();
    const [logged, attempts] = [log.lines.length, down.refusedConnections()];
    // A witness queue opened after the close reconnects on the same (growing) schedule: once it has
    // tried more often than the closed one had, a reconnect loop the close failed to stop would have
    // tried again too.
    const witnessProxy = await redisProxy();
    queues.push(createBullmqExportQueue({ redisUrl: witnessProxy.url, queueName: uniqueQueueName(), logger: createLogger('silent') }));
    await eventually(() => expect(witnessProxy.refusedConnections()).toBeGreaterThanOrEqual(attempts + 2));
    expect(down.refusedConnections()).toBe(attempts);
    expect(log.lines).toHaveLength(logged);
    await expect(queue.enqueue(task())).rejects.toThrow(/closed/);
  }, 15_000);

  test('a shorter enqueueTimeoutMs is honoured: its enqueue gives up first, saying after how long', async () => {
    const port = await refusingPort();
    const open = (enqueueTimeoutMs?: number) => {
      const queue = createBullmqExportQueue({ redisUrl: `redis://127.0.0.1:${port}`, queueName: uniqueQueueName(), logger: createLogger('silent'), enqueueTimeoutMs });
      queues.push(queue);
      return queue;
    };
    const [short, usual] = [open(300), open()];
    const order: string[] = [];
    const refusals = [
      short.enqueue(task()).catch((err: Error) => order.push(`short: ${err.message}`)),
      usual.enqueue(task()).catch((err: Error) => order.push(`usual: ${err.message}`)),
    ];
    await Promise.all(refusals);
    expect(order).toEqual([expect.stringMatching(/^short: .*within 300 ms/), expect.stringMatching(/^usual: .*within 2000 ms/)]);
  });

  test('export ids BullMQ cannot take as job ids are refused before touching Redis', async () => {
    const queue = createBullmqExportQueue({
      redisUrl: `redis://127.0.0.1:${await refusingPort()}`,
      queueName: uniqueQueueName(),
      logger: createLogger('silent'),
    });
    queues.push(queue);
    for (const exportId of ['a:b', '42', '']) {
      await expect(queue.enqueue({ tenantId: 'tenant-a', exportId })).rejects.toThrow(/job id/);
    }
  });
});
