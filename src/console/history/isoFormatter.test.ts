import { describe, expect, it } from 'vitest';
import { createIsoFormatter } from './isoFormatter.js';
import { createPrng } from './prng.js';

describe('createIsoFormatter', () => {
  it('formats exactly like Date#toISOString, forwards, backwards and across days', () => {
    const format = createIsoFormatter();
    const rng = createPrng(3);
    const start = Date.UTC(2025, 0, 1);
    const times = [start, start + 999, start + 86_399_999, start + 86_400_000, Date.UTC(2024, 1, 29, 23, 59, 59, 7)];
    for (let i = 0; i < 5_000; i += 1) times.push(start + Math.floor(rng.float() * 400 * 86_400_000));
    for (const ms of times) expect(format(ms)).toBe(new Date(ms).toISOString());
  });
});
