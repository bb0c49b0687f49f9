import { afterEach, describe, expect, test, vi } from 'vitest';
import type { ExportAttempt, ExportProcessor, ExportQueueLogger, ExportTask } from './exportQueue.js';
import { createInProcessExportQueue, type InProcessExportQueue } from './inProcessExportQueue.js';

type Call = { readonly exportId: string; readonly attempt: ExportAttempt; readonly at: number };

function recordingLogger(): { logger: ExportQueueLogger; warn: unknown[][]; error: unknown[][]; info: unknown[][] } {
  const warn: unknown[][] = [];
  const error: unknown[][] = [];
  const info: unknown[][] = [];
  const logger = {
    info: (...args: unknown[]) => void info.push(args),
    warn: (...args: unknown[]) => void warn.push(args),
    error: (...args: unknown[]) => void error.push(args),
  } as unknown as ExportQueueLogger;
  return { logger, warn, error, info };
}

/** The next turn of the event loop: what was scheduled with setImmediate before it has run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function task(exportId: string): ExportTask {
  return { tenantId: 'tenant-a', exportId };
}

/** A processor whose runs stay open until released, to observe what runs at once. */
function gatedProcessor(): { processor: ExportProcessor; started: string[]; release(exportId: string): void; running(): number } {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  let active = 0;
  return {
    started,
    processor: async (t) => {
      started.push(t.exportId);
      active += 1;
      await new Promise<void>((resolve) => gates.set(t.exportId, resolve));
      active -= 1;
    },
    release: (exportId) => {
      const open = gates.get(exportId);
      if (open === undefined) {
        throw new Error(`${exportId} is not running`);
      }
      open();
    },
    running: () => active,
  };
}

describe('the in-process export queue', () => {
  const queues: InProcessExportQueue[] = [];
  function queueOf(options: Parameters<typeof createInProcessExportQueue>[0]): InProcessExportQueue {
    const queue = createInProcessExportQueue(options);
    queues.push(queue);
    return queue;
  }

  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(queues.splice(0).map((queue) => queue.close()));
  });

  test('runs each task with attempt 1 (final only when a single attempt is allowed)', async () => {
    const calls: Call[] = [];
    const queue = queueOf({
      processor: async (t, attempt) => void calls.push({ exportId: t.exportId, attempt, at: Date.now() }),
      logger: recordingLogger().logger,
    });
    expect(queue.kind).toBe('in-process');
    await queue.enqueue(task('e-1'));
    await queue.enqueue(task('e-2'));
    await queue.whenIdle();
    expect(calls.map((c) => [c.exportId, c.attempt])).toEqual([
      ['e-1', { number: 1, final: false }],
      ['e-2', { number: 1, final: false }],
    ]);

    const single = queueOf({ processor: async (t, attempt) => void calls.push({ exportId: t.exportId, attempt, at: 0 }), logger: recordingLogger().logger, retry: { attempts: 1, backoffMs: 10 } });
    await single.enqueue(task('e-3'));
    await single.whenIdle();
    expect(calls[2]?.attempt).toEqual({ number: 1, final: true });
  });

  test('enqueue resolves before the build runs and passes the processor a copy of the task', async () => {
    const seen: ExportTask[] = [];
    const queue = queueOf({ processor: async (t) => void seen.push(t), logger: recordingLogger().logger });
    const original = { tenantId: 'tenant-a', exportId: 'e-1' };
    await queue.enqueue(original);
    expect(seen).toEqual([]);
    original.exportId = 'changed';
    await queue.whenIdle();
    expect(seen).toEqual([{ tenantId: 'tenant-a', exportId: 'e-1' }]);
  });

  test('runs FIFO and never more than `concurrency` at once', async () => {
    const gated = gatedProcessor();
    const queue = queueOf({ processor: gated.processor, logger: recordingLogger().logger, concurrency: 2 });
    for (const id of ['e-1', 'e-2', 'e-3', 'e-4', 'e-5']) {
      await queue.enqueue(task(id));
    }
    await vi.waitFor(() => expect(gated.started).toEqual(['e-1', 'e-2']));
    // Each enqueue pumps on a later turn of the event loop: once that turn has passed, a third
    // build would have started.
    await nextTurn();
    expect(gated.started).toEqual(['e-1', 'e-2']);
    expect(gated.running()).toBe(2);

    gated.release('e-2');
    await vi.waitFor(() => expect(gated.started).toEqual(['e-1', 'e-2', 'e-3']));
    expect(gated.running()).toBe(2);
    gated.release('e-1');
    gated.release('e-3');
    await vi.waitFor(() => expect(gated.started).toEqual(['e-1', 'e-2', 'e-3', 'e-4', 'e-5']));
    expect(gated.running()).toBe(2);
    gated.release('e-4');
    gated.release('e-5');
    await queue.whenIdle();
    expect(gated.running()).toBe(0);
  });

  test('retries a failing build with attempts 1, 2 and the last marked final, then succeeds', async () => {
    const calls: Call[] = [];
    const log = recordingLogger();
    const queue = queueOf({
      processor: async (t, attempt) => {
        calls.push({ exportId: t.exportId, attempt, at: Date.now() });
        if (attempt.number < 3) {
          throw new Error(`boom ${attempt.number}`);
        }
      },
      logger: log.logger,
      retry: { attempts: 3, backoffMs: 10 },
    });
    await queue.enqueue(task('e-1'));
    await queue.whenIdle();
    expect(calls.map((c) => c.attempt)).toEqual([
      { number: 1, final: false },
      { number: 2, final: false },
      { number: 3, final: true },
    ]);
    expect(log.warn).toHaveLength(2);
    expect(log.warn[0]?.[0]).toMatchObject({ exportId: 'e-1', tenantId: 'tenant-a', attempt: 1, retryInMs: 10 });
    expect(log.warn[1]?.[0]).toMatchObject({ attempt: 2, retryInMs: 20 });
    expect(log.error).toEqual([]);
  });

  test('gives up after `attempts` runs, logging an error for the last, and the rejection stays handled', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const calls: ExportAttempt[] = [];
      const log = recordingLogger();
      const queue = queueOf({
        processor: async (_t, attempt) => {
          calls.push(attempt);
          throw new Error('always');
        },
        logger: log.logger,
        retry: { attempts: 2, backoffMs: 5 },
      });
      await queue.enqueue(task('e-1'));
      // Idle counts retries waiting for their timer: nothing more can run after it.
      await queue.whenIdle();
      expect(calls).toEqual([
        { number: 1, final: false },
        { number: 2, final: true },
      ]);
      expect(log.warn).toHaveLength(1);
      expect(log.error).toHaveLength(1);
      expect(log.error[0]?.[0]).toMatchObject({ exportId: 'e-1', attempt: 2, attempts: 2 });

      // Given up: the same export can be queued afresh.
      await queue.enqueue(task('e-1'));
      await queue.whenIdle();
      expect(calls).toHaveLength(4);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  test('waits retryDelayMs between attempts: backoffMs, then twice that', async () => {
    vi.useFakeTimers();
    const calls: Call[] = [];
    const queue = queueOf({
      processor: async (t, attempt) => {
        calls.push({ exportId: t.exportId, attempt, at: Date.now() });
        throw new Error('boom');
      },
      logger: recordingLogger().logger,
      retry: { attempts: 3, backoffMs: 1000 },
    });
    const start = Date.now();
    await queue.enqueue(task('e-1'));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1999);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.map((c) => c.at - start)).toEqual([0, 1000, 3000]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(3);
  });

  test('uses exportRetryPolicy by default: three runs', async () => {
    vi.useFakeTimers();
    const calls: ExportAttempt[] = [];
    const queue = queueOf({
      processor: async (_t, attempt) => {
        calls.push(attempt);
        throw new Error('boom');
      },
      logger: recordingLogger().logger,
    });
    await queue.enqueue(task('e-1'));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual([
      { number: 1, final: false },
      { number: 2, final: false },
      { number: 3, final: true },
    ]);
  });

  test('an export enqueued again while queued, running or awaiting a retry runs once', async () => {
    const gated = gatedProcessor();
    const queue = queueOf({ processor: gated.processor, logger: recordingLogger().logger });
    await queue.enqueue(task('e-1'));
    await queue.enqueue(task('e-2'));
    await queue.enqueue(task('e-2')); // while queued
    await vi.waitFor(() => expect(gated.started).toEqual(['e-1']));
    await queue.enqueue(task('e-1')); // while running
    gated.release('e-1');
    await vi.waitFor(() => expect(gated.started).toEqual(['e-1', 'e-2']));
    gated.release('e-2');
    await queue.whenIdle();
    expect(gated.started).toEqual(['e-1', 'e-2']);

    // Once finished, the same id is a new task.
    await queue.enqueue(task('e-1'));
    await vi.waitFor(() => expect(gated.started).toEqual(['e-1', 'e-2', 'e-1']));
    gated.release('e-1');
    await queue.whenIdle();

    let runs = 0;
    const retrying = queueOf({
      processor: async (_t, attempt) => {
        runs += 1;
        if (attempt.number === 1) {
          throw new Error('once');
        }
      },
      logger: recordingLogger().logger,
      retry: { attempts: 3, backoffMs: 300 },
    });
    await retrying.enqueue(task('e-9'));
    await vi.waitFor(() => expect(runs).toBe(1));
    await retrying.enqueue(task('e-9')); // while awaiting its retry
    await retrying.whenIdle();
    expect(runs).toBe(2);
  });

  test('close waits for running builds, drops queued ones and pending retries, and refuses new tasks', async () => {
    const gated = gatedProcessor();
    const queue = queueOf({ processor: gated.processor, logger: recordingLogger().logger, concurrency: 2 });
    for (const id of ['e-1', 'e-2', 'e-3']) {
      await queue.enqueue(task(id));
    }
    await vi.waitFor(() => expect(gated.started).toEqual(['e-1', 'e-2']));

    let closed = false;
    const closing = queue.close().then(() => {
      closed = true;
    });
    await expect(queue.enqueue(task('e-4'))).rejects.toThrow(/closed/);
    gated.release('e-1');
    await vi.waitFor(() => expect(gated.running()).toBe(1));
    await nextTurn();
    expect(closed).toBe(false);
    gated.release('e-2');
    await closing;
    expect(closed).toBe(true);
    // Idle once e-2 has ended: e-3, still waiting at the close, was dropped and never starts.
    await queue.whenIdle();
    await nextTurn();
    expect(gated.started).toEqual(['e-1', 'e-2']);

    let runs = 0;
    const retrying = queueOf({
      processor: async () => {
        runs += 1;
        throw new Error('boom');
      },
      logger: recordingLogger().logger,
      retry: { attempts: 3, backoffMs: 50 },
    });
    await retrying.enqueue(task('e-5'));
    await vi.waitFor(() => expect(runs).toBe(1));
    await retrying.close();
    // A retry still waiting for its timer would keep the queue from being idle until it had run.
    await retrying.whenIdle();
    expect(runs).toBe(1);
  });

  test('a build failing while the queue closes is not retried', async () => {
    let fail = (): void => {};
    const calls: ExportAttempt[] = [];
    const log = recordingLogger();
    const queue = queueOf({
      processor: async (_t, attempt) => {
        calls.push(attempt);
        await new Promise<void>((_, reject) => {
          fail = () => reject(new Error('interrupted'));
        });
      },
      logger: log.logger,
      retry: { attempts: 3, backoffMs: 5 },
    });
    await queue.enqueue(task('e-1'));
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    const closing = queue.close();
    fail();
    await closing;
    await queue.whenIdle();
    expect(calls).toHaveLength(1);
    expect(log.warn).toHaveLength(1);
    expect(log.error).toEqual([]);
  });

  test('a processor that throws synchronously is handled like a rejection', async () => {
    const log = recordingLogger();
    const queue = queueOf({
      processor: ((_t: ExportTask, attempt: ExportAttempt) => {
        throw new Error(`sync ${attempt.number}`);
      }) as unknown as ExportProcessor,
      logger: log.logger,
      retry: { attempts: 2, backoffMs: 5 },
    });
    await queue.enqueue(task('e-1'));
    await queue.whenIdle();
    expect(log.warn).toHaveLength(1);
    expect(log.error).toHaveLength(1);
  });

  test('rejects invalid settings', () => {
    const logger = recordingLogger().logger;
    const processor: ExportProcessor = async () => {};
    expect(() => createInProcessExportQueue({ processor, logger, concurrency: 0 })).toThrow(RangeError);
    expect(() => createInProcessExportQueue({ processor, logger, retry: { attempts: 0, backoffMs: 10 } })).toThrow(RangeError);
  });
});
