import { describe, expect, it } from 'vitest';
import { createIdFactory } from './idFactory.js';
import { createPrng, hashSeed } from './prng.js';

describe('createPrng', () => {
  it('repeats its sequence for the same seed and not for another', () => {
    const draw = (seed: number) => {
      const rng = createPrng(seed);
      return Array.from({ length: 5 }, () => rng.uint32());
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(43)).not.toEqual(draw(42));
  });

  it('keeps ints within their bounds and spreads them over the range', () => {
    const rng = createPrng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 2_000; i += 1) {
      const value = rng.int(3, 6);
      expect(value).toBeGreaterThanOrEqual(3);
      expect(value).toBeLessThanOrEqual(6);
      seen.add(value);
    }
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
  });

  it('draws counts around their mean, small and large', () => {
    const rng = createPrng(11);
    const mean = (m: number) => Array.from({ length: 4_000 }, () => rng.count(m)).reduce((a, b) => a + b, 0) / 4_000;
    expect(mean(2)).toBeCloseTo(2, 0);
    expect(mean(300) / 300).toBeCloseTo(1, 1);
    expect(rng.count(0)).toBe(0);
  });
});

describe('hashSeed', () => {
  it('tells seeds and salts apart, and treats a number like its text', () => {
    expect(hashSeed('1', 'tenant:0')).toBe(hashSeed(1, 'tenant:0'));
    expect(hashSeed('1', 'tenant:0')).not.toBe(hashSeed('1', 'tenant:1'));
    expect(hashSeed('1', 'tenant:0')).not.toBe(hashSeed('2', 'tenant:0'));
  });
});

describe('createIdFactory', () => {
  it('makes prefixed base62 ids and version-4 UUIDs from the generator', () => {
    const ids = createIdFactory(createPrng(5));
    expect(ids.id('box')).toMatch(/^box_[0-9A-Za-z]{14}$/);
    for (let i = 0; i < 100; i += 1) {
      expect(ids.uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(createIdFactory(createPrng(5)).id('box')).toBe(createIdFactory(createPrng(5)).id('box'));
  });
});
