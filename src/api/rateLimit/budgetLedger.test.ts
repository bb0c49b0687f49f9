import { describe, expect, test } from 'vitest';
import { createBudgetLedger } from './budgetLedger.js';

function ledgerAt(start = 1_000_000, options: { points?: number; maxKeys?: number } = {}) {
  let now = start;
  const ledger = createBudgetLedger({ points: options.points ?? 5, windowSeconds: 60, now: () => now, ...(options.maxKeys === undefined ? {} : { maxKeys: options.maxKeys }) });
  return { ledger, advance: (ms: number) => void (now += ms) };
}

describe('the ledger a process counts on while Redis cannot be reached', () => {
  test('a key Redis said had used its budget stays refused, until the window Redis gave ends', () => {
    const { ledger, advance } = ledgerAt();
    ledger.observed('key', 5, 20_000);
    expect(ledger.consume('key', 1)).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 20, retryAfterSeconds: 20 });
    advance(20_000);
    expect(ledger.consume('key', 1)).toEqual({ allowed: true, limit: 5, remaining: 4, resetSeconds: 60 });
  });

  test('a key with R left gets R here, and those R are owed to Redis once', () => {
    const { ledger } = ledgerAt();
    ledger.observed('key', 3, 30_000);
    expect([1, 2, 3].map(() => ledger.consume('key', 1).allowed)).toEqual([true, true, false]);
    expect(ledger.takeOwed('key')).toBe(2);
    expect(ledger.takeOwed('key')).toBe(0);
  });

  test('owed units go back when Redis could not take them, and are forgotten with their window', () => {
    const { ledger, advance } = ledgerAt();
    ledger.observed('key', 0, 10_000);
    ledger.consume('key', 2);
    ledger.repay('key', ledger.takeOwed('key'));
    expect(ledger.takeOwed('key')).toBe(2);
    ledger.repay('key', 2);
    advance(10_000);
    expect(ledger.takeOwed('key')).toBe(0);
  });

  test('a key Redis never answered for starts from a whole budget; a new answer from Redis replaces what was counted here', () => {
    const { ledger } = ledgerAt();
    expect(ledger.consume('new', 1)).toMatchObject({ allowed: true, remaining: 4 });
    ledger.observed('new', 4, 50_000);
    expect(ledger.takeOwed('new')).toBe(0);
    expect(ledger.consume('new', 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test('a refund gives back a unit counted here', () => {
    const { ledger } = ledgerAt();
    ledger.observed('key', 4, 30_000);
    ledger.consume('key', 1);
    ledger.refund('key');
    expect(ledger.takeOwed('key')).toBe(0);
    expect(ledger.consume('key', 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test('it remembers at most maxKeys keys, dropping the one seen longest ago', () => {
    const { ledger } = ledgerAt(0, { maxKeys: 2 });
    ledger.observed('a', 5, 30_000);
    ledger.observed('b', 5, 30_000);
    ledger.observed('a', 5, 30_000);
    ledger.observed('c', 5, 30_000);
    expect(ledger.consume('a', 1).allowed).toBe(false);
    expect(ledger.consume('c', 1).allowed).toBe(false);
    // 'b' was dropped: it counts from a whole budget again.
    expect(ledger.consume('b', 1).allowed).toBe(true);
  });
});
