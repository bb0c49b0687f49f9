import { randomInt } from 'node:crypto';
import { onTestFailed } from 'vitest';

export type SeededRandom = {
  readonly seed: number;
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [0, max). */
  below(max: number): number;
};

/**
 * The random choices of one test, from a seed: TEST_SEED when it is set, a fresh one otherwise.
 * Call it inside the test: when the test fails, the seed is printed with how to run it again.
 */
export function seededRandom(): SeededRandom {
  const fromEnv = process.env.TEST_SEED;
  const seed = fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) >>> 0 : randomInt(2 ** 32);
  onTestFailed(({ task }) => {
    process.stderr.write(`\n[tests] "${task.name}" made its random choices from seed ${seed}: TEST_SEED=${seed} runs them again\n`);
  });
  // mulberry32: small, fast and good enough to pick test moments.
  let state = seed;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { seed, next, below: (max) => Math.floor(next() * max) };
}
