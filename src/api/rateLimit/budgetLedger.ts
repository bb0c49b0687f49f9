import type { BudgetDecision } from './requestBudget.js';

/**
 * What one process knows of a Redis-backed limit, so that it can go on counting while Redis cannot
 * be reached (a failover, an outage) without granting a key a fresh budget:
 * - the last count Redis answered for each key, and when its window ends: counting here resumes
 *   from it, so a key that had used its budget stays refused, and one with R left gets R here;
 * - what was granted here meanwhile: it is owed to Redis and added to the key's next request
 *   there, so the shared count ends up as if Redis had counted it.
 * A key with R left when Redis went away is so granted at most R_1 + … + R_P - R past its budget
 * by P processes, R_p being what process p last heard was left: (P - 1) * R when every view is
 * current, and nothing for a key every process has seen refused.
 */
export type BudgetLedger = {
  /** Redis answered: `used` units spent in the key's window, which ends in `msLeft`. */
  observed(key: string, used: number, msLeft: number): void;
  /** Takes the units granted here while Redis was away (none once their window has ended); `repay` puts them back when Redis could not be reached after all. */
  takeOwed(key: string): number;
  repay(key: string, units: number): void;
  /** Counts a request here: on from Redis's last count for the key, or from zero for a key it never answered. */
  consume(key: string, cost: number): BudgetDecision;
  /** Gives one unit back here (a refund while Redis cannot be reached). */
  refund(key: string): void;
};

type Entry = { used: number; endsAt: number; owed: number };

/** Keys remembered at most (least recently seen dropped first): a flood of addresses cannot grow it without end. */
export const ledgerMaxKeys = 10_000;

export function createBudgetLedger(options: { readonly points: number; readonly windowSeconds: number; readonly maxKeys?: number; readonly now?: () => number }): BudgetLedger {
  const { points, windowSeconds } = options;
  const maxKeys = options.maxKeys ?? ledgerMaxKeys;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const live = (key: string, at: number): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined || entry.endsAt > at) return entry;
    entries.delete(key);
    return undefined;
  };
  const remember = (key: string, entry: Entry): void => {
    // Reinserted, so that the Map's order is the order in which keys were last seen.
    entries.delete(key);
    entries.set(key, entry);
    if (entries.size > maxKeys) {
      const oldest = entries.keys().next();
      if (oldest.done !== true) entries.delete(oldest.value);
    }
  };

  return {
    observed: (key, used, msLeft) => remember(key, { used, endsAt: now() + msLeft, owed: 0 }),
    takeOwed: (key) => {
      const entry = live(key, now());
      if (entry === undefined) return 0;
      const owed = entry.owed;
      entry.owed = 0;
      return owed;
    },
    repay: (key, units) => {
      const entry = live(key, now());
      if (entry !== undefined && units > 0) entry.owed += units;
    },
    consume: (key, cost) => {
      const at = now();
      const entry = live(key, at) ?? { used: 0, endsAt: at + windowSeconds * 1000, owed: 0 };
      // Spent even when refused, as Redis counts it.
      entry.used += cost;
      const allowed = entry.used <= points;
      if (allowed) entry.owed += cost;
      remember(key, entry);
      const remaining = Math.max(0, points - entry.used);
      const resetSeconds = Math.max(1, Math.ceil((entry.endsAt - at) / 1000));
      return allowed ? { allowed, limit: points, remaining, resetSeconds } : { allowed, limit: points, remaining, resetSeconds, retryAfterSeconds: resetSeconds };
    },
    refund: (key) => {
      const entry = live(key, now());
      if (entry === undefined) return;
      entry.used = Math.max(0, entry.used - 1);
      entry.owed = Math.max(0, entry.owed - 1);
    },
  };
}
