import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { redisProxy } from '../../../test/support/redisProxy.js';
import { capturingLogger as captureLogs, logLevels } from '../../../test/support/capturingLogger.js';
import { eventually } from '../../../test/support/eventually.js';
import { services, testRedisUrl } from '../../../test/support/services.js';
import { createLogger, type Logger } from '../../platform/logger.js';
import { createRequestBudget, type BudgetDecision, type RequestBudget } from './requestBudget.js';

type LogLine = { readonly level: number; readonly msg: string; readonly store?: string };



function uniquePrefix(): string {
  return `supply-api:test:budget:${randomBytes(6).toString('hex')}`;
}

async function consumeTimes(budget: RequestBudget, key: string, times: number): Promise<BudgetDecision[]> {
  const decisions: BudgetDecision[] = [];
  for (let i = 0; i < times; i += 1) {
    decisions.push(await budget.consume(key));
  }
  return decisions;
}

describe.runIf(services.redis)('the request budget on real Redis', () => {
  let admin: Redis;
  const prefixes: string[] = [];
  const budgets: RequestBudget[] = [];

  async function redisBudget(options: { pointsPerWindow: number; windowSeconds?: number; logger?: Logger; prefix?: string; url?: string }): Promise<RequestBudget> {
    const keyPrefix = options.prefix ?? uniquePrefix();
    prefixes.push(keyPrefix);
    const budget = await createRequestBudget({
      pointsPerWindow: options.pointsPerWindow,
      windowSeconds: options.windowSeconds ?? 60,
      redisUrl: options.url ?? testRedisUrl,
      logger: options.logger ?? createLogger('silent'),
      keyPrefix,
    });
    budgets.push(budget);
    return budget;
  }

  beforeAll(() => {
    admin = new Redis(testRedisUrl);
  });

  afterEach(async () => {
    await Promise.all(budgets.splice(0).map((budget) => budget.close()));
    for (const prefix of prefixes.splice(0)) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) {
        await admin.del(...keys);
      }
    }
  });

  afterAll(async () => {
    await admin.quit();
  });

  test('counts in Redis under the key prefix, refusing the N+1-th request', async () => {
    const prefix = uniquePrefix();
    const log = captureLogs<LogLine>();
    const budget = await redisBudget({ pointsPerWindow: 4, prefix, logger: log.logger });
    expect(budget.store).toBe('redis');

    const decisions = await consumeTimes(budget, 'key-a', 5);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([3, 2, 1, 0, 0]);
    expect(decisions[4]?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(decisions[4]?.retryAfterSeconds).toBeLessThanOrEqual(60);

    expect(await admin.get(`${prefix}:key-a`)).toBe('5');
    const ttl = await admin.pttl(`${prefix}:key-a`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(log.at(logLevels.warn)).toEqual([]);
  });

  test('requests made while the client is still connecting are counted in Redis', async () => {
    const prefix = uniquePrefix();
    const budget = await redisBudget({ pointsPerWindow: 10, prefix });
    await Promise.all([budget.consume('key-a'), budget.consume('key-a')]);
    expect(await admin.get(`${prefix}:key-a`)).toBe('2');
  });

  test('two API processes on the same Redis share one budget, atomically', async () => {
    const prefix = uniquePrefix();
    const limit = 10;
    const first = await redisBudget({ pointsPerWindow: limit, prefix });
    const second = await redisBudget({ pointsPerWindow: limit, prefix });

    const decisions = await Promise.all(
      Array.from({ length: 3 * limit }, (_, i) => (i % 2 === 0 ? first : second).consume('shared-key')),
    );
    const allowed = decisions.filter((d) => d.allowed);
    expect(allowed).toHaveLength(limit);
    expect(allowed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: limit }, (_, i) => i));
    for (const refused of decisions.filter((d) => !d.allowed)) {
      expect(refused.remaining).toBe(0);
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }

    // Other keys are untouched, whichever process serves them.
    expect((await second.consume('other-key')).remaining).toBe(limit - 1);
  });

  test('the budget is back once the window has passed', async () => {
    const prefix = uniquePrefix();
    const budget = await redisBudget({ pointsPerWindow: 2, windowSeconds: 1, prefix });
    const decisions = await consumeTimes(budget, 'key-a', 3);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    expect(decisions[2]?.retryAfterSeconds).toBe(1);

    // The window is over when Redis has expired its counter.
    expect(await admin.exists(`${prefix}:key-a`)).toBe(1);
    await eventually(async () => expect(await admin.exists(`${prefix}:key-a`)).toBe(0));
    expect(await budget.consume('key-a')).toMatchObject({ allowed: true, remaining: 1 });
  });

  test('when Redis goes away it keeps serving per process, warns once, and says when Redis is back', async () => {
    const proxy = await redisProxy();
    await proxy.start();
    const prefix = uniquePrefix();
    const log = captureLogs<LogLine>();
    const budget = await redisBudget({ pointsPerWindow: 5, prefix, url: proxy.url, logger: log.logger });

    expect((await consumeTimes(budget, 'key-a', 3)).map((d) => d.remaining)).toEqual([4, 3, 2]);
    expect(await admin.get(`${prefix}:key-a`)).toBe('3');

    await proxy.stop();
    await vi.waitFor(() => expect(log.at(logLevels.warn)).toHaveLength(1));

    // This process counts on from the last count Redis gave (3 of 5): 2 more, not a fresh budget.
    const whileDown = await consumeTimes(budget, 'key-a', 4);
    expect(whileDown.map((d) => d.allowed)).toEqual([true, true, false, false]);
    expect(whileDown.map((d) => d.remaining)).toEqual([1, 0, 0, 0]);
    expect(await admin.get(`${prefix}:key-a`)).toBe('3');

    // Several failed reconnects, still a single warning.
    const refusedBefore = proxy.refusedConnections();
    await eventually(() => expect(proxy.refusedConnections()).toBeGreaterThanOrEqual(refusedBefore + 3));
    expect(log.at(logLevels.warn)).toHaveLength(1);
    expect(log.at(logLevels.warn)[0]).toMatchObject({ store: 'redis' });

    await proxy.start();
    await vi.waitFor(() => expect(log.at(logLevels.info)).toHaveLength(1), { timeout: 5000 });
    expect(log.at(logLevels.info)[0]).toMatchObject({ store: 'redis' });

    // Back on the shared counter, which is given the 2 granted meanwhile with the next request: 3 + 2 + 1 > 5.
    expect(await budget.consume('key-a')).toMatchObject({ allowed: false, remaining: 0 });
    expect(await admin.get(`${prefix}:key-a`)).toBe('6');
    // Another key, unseen while Redis was away, owes nothing.
    expect(await budget.consume('key-b')).toMatchObject({ allowed: true, remaining: 4 });
    expect(log.at(logLevels.warn)).toHaveLength(1);

    await budget.close();
    await proxy.stop();
  });
});

describe('the request budget when Redis is unreachable from the start', () => {
  let budget: RequestBudget | undefined;

  afterEach(async () => {
    await budget?.close();
    budget = undefined;
  });

  test('counts in this process from zero (Redis never answered), and warns once', async () => {
    const log = captureLogs<LogLine>();
    const down = await redisProxy();
    budget = await createRequestBudget({
      pointsPerWindow: 3,
      windowSeconds: 60,
      redisUrl: down.url,
      logger: log.logger,
      keyPrefix: uniquePrefix(),
    });
    expect(budget.store).toBe('redis');

    const decisions = await consumeTimes(budget, 'key-a', 4);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[3]?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((await budget.consume('key-b')).remaining).toBe(2);

    // Several failed reconnects, still a single warning.
    await eventually(() => expect(down.refusedConnections()).toBeGreaterThanOrEqual(3));
    expect(log.at(logLevels.warn)).toHaveLength(1);
    expect(log.at(logLevels.warn)[0]).toMatchObject({ store: 'redis' });
    expect(log.at(logLevels.info)).toEqual([]);
  });

  test('closing while Redis is unreachable stops the reconnect loop without logging', async () => {
    const unreachable = async (logger: Logger) => {
      const down = await redisProxy();
      const opened = await createRequestBudget({ pointsPerWindow: 3, windowSeconds: 60, redisUrl: down.url, logger });
      await opened.consume('key-a');
      await eventually(() => expect(down.refusedConnections()).toBeGreaterThanOrEqual(2));
      return { budget: opened, down };
    };
    const log = captureLogs<LogLine>();
    const closed = await unreachable(log.logger);
    await closed.budget.close();
    const [logged, attempts] = [log.lines.length, closed.down.refusedConnections()];
    // A witness opened after the close reconnects on the same (growing) schedule: once it has tried
    // more often than the closed one had, a loop the close failed to stop would have tried again too.
    const witness = await unreachable(createLogger('silent'));
    budget = witness.budget;
    await eventually(() => expect(witness.down.refusedConnections()).toBeGreaterThanOrEqual(attempts + 2));
    expect(closed.down.refusedConnections()).toBe(attempts);
    expect(log.lines).toHaveLength(logged);
  });
});
