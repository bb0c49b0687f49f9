/**
 * A small seeded pseudo-random generator (sfc32, seeded through splitmix32). The seed history must be
 * byte-identical for identical parameters, so nothing in it may use Math.random or the wall clock.
 */
export type Prng = {
  /** A uniformly distributed unsigned 32-bit integer. */
  uint32(): number;
  /** A float in [0, 1). */
  float(): number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** A float in [min, max). */
  between(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A count around `mean`: Poisson for small means, a rounded normal for large ones. */
  count(mean: number): number;
};

export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const splitmix32 = (): number => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix32();
  let b = splitmix32();
  let c = splitmix32();
  let d = splitmix32();

  const uint32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  // The first outputs of a freshly seeded sfc32 are still correlated with the seed.
  for (let i = 0; i < 12; i += 1) uint32();

  const float = (): number => uint32() / 4_294_967_296;
  const int = (min: number, max: number): number => min + Math.floor(float() * (max - min + 1));

  return {
    uint32,
    float,
    int,
    between: (min, max) => min + float() * (max - min),
    chance: (probability) => float() < probability,
    pick: <T>(items: readonly T[]): T => {
      const item = items[Math.floor(float() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    count: (mean) => {
      if (mean <= 0) return 0;
      if (mean > 30) {
        // Box-Muller; the exact distribution does not matter, only its mean and spread.
        const u = Math.max(float(), 1e-12);
        const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * float());
        return Math.max(0, Math.round(mean + normal * Math.sqrt(mean)));
      }
      const limit = Math.exp(-mean);
      let k = 0;
      let p = float();
      while (p > limit) {
        k += 1;
        p *= float();
      }
      return k;
    },
  };
}

/** Folds any seed value and a salt into a 32-bit seed (FNV-1a over the text, then avalanche). */
export function hashSeed(seed: string | number, salt: string): number {
  const text = `${String(seed)}\u0000${salt}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x7feb352d);
  hash ^= hash >>> 15;
  hash = Math.imul(hash, 0x846ca68b);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
