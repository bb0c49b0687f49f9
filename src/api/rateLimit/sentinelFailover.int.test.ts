import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually } from '../../../test/support/eventually.js';
import { sentinelClusterUnavailable, startSentinelCluster, type SentinelCluster } from '../../../test/support/sentinelCluster.js';
import { pace } from '../../../test/support/pace.js';
import { createLogger } from '../../platform/logger.js';
import { createRequestBudget, type BudgetDecision, type RequestBudget } from './requestBudget.js';

// Request budgets on REDIS_URL=redis+sentinel://… of a master, a replica and three Sentinels of
// the test's own, as two API processes count them, while the master is SIGKILLed.

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const unavailable = sentinelClusterUnavailable();
if (unavailable !== undefined && !inCi) process.stderr.write(`\n[tests] Redis Sentinel skipped: ${unavailable}\n`);

const points = 20;

/** Waits until `condition` holds; `timeoutMs` bounds only a failure (at least 30 s on a loaded machine). */
async function waitFor(what: string, timeoutMs: number, condition: () => Promise<boolean>): Promise<void> {
  await eventually(
    async () => {
      if (!(await condition())) throw new Error(`${what}: not yet`);
    },
    { timeoutMs: Math.max(timeoutMs, 30_000), intervalMs: 50 },
  );
}

describe.runIf(inCi || unavailable === undefined)('request budgets on Redis with Sentinel', () => {
  let cluster: SentinelCluster;
  const budgets: RequestBudget[] = [];
  const budget = async (keyPrefix: string): Promise<RequestBudget> => {
    const created = await createRequestBudget({ pointsPerWindow: points, windowSeconds: 60, redisUrl: cluster.url, logger: createLogger('silent'), keyPrefix });
    budgets.push(created);
    return created;
  };

  beforeAll(async () => {
    cluster = await startSentinelCluster();
  });
  afterAll(async () => {
    for (const created of budgets) await created.close();
    await cluster?.close();
  });

  /** Clients of a Sentinel subscribed to a channel (the set-up's own listener is one of them). */
  const subscribersOf = async (index: number): Promise<number> => {
    const address = cluster.sentinels[index];
    if (address === undefined) throw new Error('no such Sentinel');
    const redis = new Redis({ host: address.host, port: address.port, maxRetriesPerRequest: 1 });
    try {
      const list = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
      return list.split('\n').filter((line) => line.trim() !== '').length;
    } finally {
      redis.disconnect();
    }
  };

  test('a closed budget leaves no connection to the Sentinels behind (the process can exit)', async () => {
    const before = await Promise.all(cluster.sentinels.map((_, index) => subscribersOf(index)));
    const open = await budget(`supply-api:test:${randomBytes(6).toString('hex')}`);
    expect((await open.consume('key')).allowed).toBe(true);
    // ioredis's failover detector listens for +switch-master on the Sentinels.
    await waitFor('the failover detector to subscribe', 5000, async () => (await Promise.all(cluster.sentinels.map((_, index) => subscribersOf(index)))).some((count, index) => count > (before[index] ?? 0)));
    await open.close();
    await waitFor('every Sentinel connection to close', 5000, async () => (await Promise.all(cluster.sentinels.map((_, index) => subscribersOf(index)))).every((count, index) => count === before[index]));
  });

  test('across a master kill: no check fails, a key past its budget stays refused, a key with R left gets at most what each process last saw left, less R', { timeout: 120_000 }, async () => {
    const prefix = `supply-api:test:${randomBytes(6).toString('hex')}`;
    const processes = [await budget(prefix), await budget(prefix)];
    // A load balancer's turns: each process sees every other request.
    const leftSeen = processes.map(() => points);
    for (let i = 0; i < 12; i += 1) leftSeen[i % 2] = (await processes[i % 2]?.consume('partial'))?.remaining ?? points;
    for (let i = 0; i < points + 2; i += 1) await processes[i % 2]?.consume('exhausted');
    await cluster.replicated();
    const left = points - 12;

    const { killed, at: killedAt } = await cluster.killMaster();
    const during: BudgetDecision[] = [];
    let granted = 0;
    let promotedAt: number | undefined;
    const promotion = cluster.promotion(killed).then((found) => {
      promotedAt = found.at;
    });
    // Both processes keep asking until the promoted master has been serving for 2 s.
    while (promotedAt === undefined || performance.now() - promotedAt < 2000) {
      for (const counter of processes) {
        if ((await counter.consume('partial')).allowed) granted += 1;
        during.push(await counter.consume('exhausted'));
      }
      await pace(20);
    }
    await promotion;
    // The next request of each hands Redis what it granted meanwhile.
    for (const counter of processes) if ((await counter.consume('partial')).allowed) granted += 1;

    const overshoot = 12 + granted - points;
    const bound = leftSeen.reduce((sum, seen) => sum + seen, 0) - left;
    process.stderr.write(`[budget failover] promoted ${Math.round((promotedAt ?? killedAt) - killedAt)} ms after the kill; granted past the budget ${overshoot} (bound ${bound}, seen left ${leftSeen.join(', ')})\n`);
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((decision) => decision.allowed)).toEqual([]);
    for (const decision of during) expect(decision.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(overshoot).toBeLessThanOrEqual(bound);
    // The shared count, on the promoted master, holds what was granted through the failover.
    const master = await cluster.masterClient();
    try {
      expect(Number(await master.get(`${prefix}:partial`))).toBeGreaterThanOrEqual(12 + granted);
    } finally {
      master.disconnect();
    }
  });
});
