import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { eventually } from '../../test/support/eventually.js';
import { capturingLogger, logLevels } from '../../test/support/capturingLogger.js';
import { sentinelClusterUnavailable, startSentinelCluster, type SentinelCluster } from '../../test/support/sentinelCluster.js';
import { createBullmqExportQueue, startBullmqExportWorker } from './bullmqExportQueue.js';
import type { ExportQueue, ExportTask, ExportWorker } from './exportQueue.js';

// The BullMQ export queue on REDIS_URL=redis+sentinel://… of a master, a replica and three
// Sentinels of the test's own.

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const unavailable = sentinelClusterUnavailable();
if (unavailable !== undefined && !inCi) process.stderr.write(`\n[tests] Redis Sentinel skipped: ${unavailable}\n`);

type LogLine = { readonly level: number; readonly msg: string };

/** Waits until `condition` holds; `timeoutMs` bounds only a failure (at least 30 s on a loaded machine). */
async function waitFor(what: string, timeoutMs: number, condition: () => boolean | Promise<boolean>): Promise<void> {
  await eventually(
    async () => {
      if (!(await condition())) throw new Error(`${what}: not yet`);
    },
    { timeoutMs: Math.max(timeoutMs, 30_000), intervalMs: 25 },
  );
}

const task = (): ExportTask => ({ tenantId: 'tenant-a', exportId: randomUUID() });

describe.runIf(inCi || unavailable === undefined)('the export queue on Redis with Sentinel', () => {
  let cluster: SentinelCluster;
  const closables: Array<ExportQueue | ExportWorker> = [];
  const track = <T extends ExportQueue | ExportWorker>(closable: T): T => {
    closables.push(closable);
    return closable;
  };

  beforeAll(async () => {
    cluster = await startSentinelCluster();
  });
  afterAll(async () => {
    for (const closable of closables) await closable.close();
    await cluster?.close();
  });

  test('a job is acknowledged once a replica holds it; with the replica stalled it is still acknowledged, with a warning', async () => {
    // Given a replica in sync (the failover test puts its killed master back as one).
    await cluster.replicated();
    const log = capturingLogger<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: cluster.url, queueName: `test-exports-${randomBytes(6).toString('hex')}`, logger: log.logger }));
    await queue.enqueue(task());
    expect(log.at(logLevels.warn)).toEqual([]);
    const frozen = await cluster.freezeReplicas();
    try {
      await queue.enqueue(task());
    } finally {
      await frozen.resume();
    }
    expect(log.at(logLevels.warn).map((line) => line.msg)).toEqual([expect.stringMatching(/no replica confirmed the job within \d+ ms; it is on the master only/)]);
  });

  test('the master SIGKILLed mid-build: the build completes once, queued jobs are kept, and the worker goes on on the promoted replica', { timeout: 120_000 }, async () => {
    const queueName = `test-exports-${randomBytes(6).toString('hex')}`;
    const log = capturingLogger<LogLine>();
    const queue = track(createBullmqExportQueue({ redisUrl: cluster.url, queueName, logger: log.logger }));
    const runs: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    track(
      startBullmqExportWorker({
        redisUrl: cluster.url,
        queueName,
        concurrency: 1,
        logger: log.logger,
        processor: async (t) => {
          runs.push(t.exportId);
          // The first build is still under way while the master dies.
          if (runs.length === 1) await gate;
        },
      }),
    );
    const before = [task(), task(), task()];
    for (const t of before) await queue.enqueue(t);
    await waitFor('the first build to start', 10_000, () => runs.length === 1);

    const { killed } = await cluster.killMaster();
    // The killed master comes back as a replica whatever happens here: other tests need one.
    onTestFinished(() => cluster.restartKilled());
    release();
    await cluster.promotion(killed);
    const after = [task(), task()];
    for (const t of after) {
      // An enqueue refused in the moment after the promotion is a 500 to its client; this one is tried again.
      await waitFor('the producer to queue again', 20_000, async () => queue.enqueue(t).then(() => true, () => false));
    }

    const everyId = [...before, ...after].map((t) => t.exportId).sort();
    await waitFor('every job to be built', 30_000, () => new Set(runs).size === everyId.length);
    const master = await cluster.master();
    const inspect = new Queue(queueName, { connection: { host: master.host, port: master.port, maxRetriesPerRequest: 1 } });
    try {
      await waitFor('BullMQ to record every job completed', 10_000, async () => (await inspect.getJobCounts('completed')).completed === everyId.length);
      expect(await inspect.getJobCounts('completed', 'failed', 'active', 'wait', 'delayed')).toEqual({ completed: everyId.length, failed: 0, active: 0, wait: 0, delayed: 0 });
    } finally {
      await inspect.close();
    }
    expect([...runs].sort()).toEqual(everyId);
  });
});
