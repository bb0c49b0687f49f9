import { vi } from 'vitest';

export type EventuallyOptions = {
  /**
   * How long a failing assertion is retried before the test fails with its last error. It bounds
   * failure only: a condition that holds returns at the next poll, however slow the machine.
   */
  readonly timeoutMs?: number;
  /** Time between two tries. */
  readonly intervalMs?: number;
};

/**
 * Retries `assertion` (which throws, e.g. with `expect`, while the condition does not hold) until it
 * passes, and returns what it returned: waits on a condition instead of sleeping before asserting.
 * vitest's `vi.waitFor` does the polling; this fixes a timeout generous enough for a loaded machine.
 */
export function eventually<T>(assertion: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<T> {
  return vi.waitFor(assertion, { timeout: options.timeoutMs ?? 30_000, interval: options.intervalMs ?? 20 });
}
