import { describe, expect, test, vi } from 'vitest';
import { createLogger } from '../../platform/logger.js';
import { budgetHeaders, createRequestBudget, type BudgetDecision, type RequestBudget } from './requestBudget.js';

const silentLogger = createLogger('silent');

function memoryBudget(pointsPerWindow: number, windowSeconds = 60): Promise<RequestBudget> {
  return createRequestBudget({ pointsPerWindow, windowSeconds, logger: silentLogger });
}

async function consumeTimes(budget: RequestBudget, key: string, times: number): Promise<BudgetDecision[]> {
  const decisions: BudgetDecision[] = [];
  for (let i = 0; i < times; i += 1) {
    decisions.push(await budget.consume(key));
  }
  return decisions;
}

describe('the request budget in memory', () => {
  test('without a Redis URL it is backed by memory', async () => {
    const budget = await memoryBudget(3);
    expect(budget.store).toBe('memory');
    await budget.close();
  });

  test('a unit given back (a request refused after it consumed one) is spent again by the next request', async () => {
    const budget = await memoryBudget(2);
    await consumeTimes(budget, 'key-r', 2);
    await budget.refund('key-r');
    const [again, beyond] = await consumeTimes(budget, 'key-r', 2);
    expect(again).toMatchObject({ allowed: true, remaining: 0 });
    expect(beyond).toMatchObject({ allowed: false });
    await budget.close();
  });

  test('allows N requests counting down, then refuses the N+1-th with a Retry-After', async () => {
    const budget = await memoryBudget(5);
    const decisions = await consumeTimes(budget, 'key-a', 6);

    expect(decisions.slice(0, 5).map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(decisions.slice(0, 5).map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    for (const d of decisions.slice(0, 5)) {
      expect(d.limit).toBe(5);
      expect(d.retryAfterSeconds).toBeUndefined();
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(d.resetSeconds).toBeLessThanOrEqual(60);
    }

    const refused = decisions[5];
    expect(refused).toMatchObject({ allowed: false, limit: 5, remaining: 0 });
    expect(refused?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(refused?.retryAfterSeconds).toBe(refused?.resetSeconds);
    await budget.close();
  });

  test('keeps refusing while the window lasts', async () => {
    const budget = await memoryBudget(2);
    const decisions = await consumeTimes(budget, 'key-a', 5);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([1, 0, 0, 0, 0]);
  });

  test('separate keys have separate budgets', async () => {
    const budget = await memoryBudget(2);
    await consumeTimes(budget, 'key-a', 2);
    expect((await budget.consume('key-a')).allowed).toBe(false);

    const other = await budget.consume('key-b');
    expect(other).toMatchObject({ allowed: true, remaining: 1 });
  });

  test('separate budgets do not share counters', async () => {
    const first = await memoryBudget(1);
    const second = await memoryBudget(1);
    expect((await first.consume('key-a')).allowed).toBe(true);
    expect((await second.consume('key-a')).allowed).toBe(true);
  });

  test('the budget is back once the window has passed', async () => {
    // The clock is moved, not waited for.
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    try {
      const budget = await memoryBudget(2, 1);
      const decisions = await consumeTimes(budget, 'key-a', 3);
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
      expect(decisions[2]?.retryAfterSeconds).toBe(1);

      await vi.advanceTimersByTimeAsync(999);
      expect(await budget.consume('key-a')).toMatchObject({ allowed: false });
      await vi.advanceTimersByTimeAsync(2);
      expect(await budget.consume('key-a')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  test('rejects a budget that is not a positive whole number', async () => {
    await expect(memoryBudget(0)).rejects.toThrow(RangeError);
    await expect(memoryBudget(1.5)).rejects.toThrow(RangeError);
    await expect(memoryBudget(10, 0)).rejects.toThrow(RangeError);
  });
});

describe('budget headers', () => {
  test('an allowed request announces limit, remaining, reset and policy', () => {
    const headers = budgetHeaders({ allowed: true, limit: 120, remaining: 119, resetSeconds: 60 }, 60);
    expect(headers).toEqual({
      'X-RateLimit-Limit': '120',
      'X-RateLimit-Remaining': '119',
      'X-RateLimit-Reset': '60',
      RateLimit: 'limit=120, remaining=119, reset=60',
      'RateLimit-Policy': '120;w=60',
    });
  });

  test('a refused request adds Retry-After', () => {
    const headers = budgetHeaders({ allowed: false, limit: 120, remaining: 0, resetSeconds: 17, retryAfterSeconds: 17 }, 60);
    expect(headers).toEqual({
      'X-RateLimit-Limit': '120',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '17',
      RateLimit: 'limit=120, remaining=0, reset=17',
      'RateLimit-Policy': '120;w=60',
      'Retry-After': '17',
    });
  });

  test('a refusal without retryAfterSeconds falls back to the reset', () => {
    const headers = budgetHeaders({ allowed: false, limit: 5, remaining: 0, resetSeconds: 3 }, 10);
    expect(headers['Retry-After']).toBe('3');
    expect(headers['RateLimit-Policy']).toBe('5;w=10');
  });

  test('headers of a real refusal', async () => {
    const budget = await memoryBudget(1);
    await budget.consume('key-a');
    const headers = budgetHeaders(await budget.consume('key-a'), 60);
    expect(headers['X-RateLimit-Remaining']).toBe('0');
    expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(headers['Retry-After']).toBe(headers['X-RateLimit-Reset']);
  });
});
