import type { Prng } from './prng.js';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const hex = '0123456789abcdef';

export type IdFactory = {
  /** An opaque id such as `box_4fK9…`: a prefix and a random base62 suffix. */
  id(prefix: string): string;
  /** A version-4-format UUID whose bits come from the seeded generator. */
  uuid(): string;
  /** Random characters from an alphabet (codes, lots, serials). */
  chars(length: number, alphabet?: string): string;
};

export const idSuffixLength = 14;

export function createIdFactory(prng: Prng): IdFactory {
  const chars = (length: number, alphabet: string = base62): string => {
    let out = '';
    for (let i = 0; i < length; i += 1) out += alphabet.charAt(prng.uint32() % alphabet.length);
    return out;
  };
  const hexWord = (word: number): string => {
    let out = '';
    for (let shift = 28; shift >= 0; shift -= 4) out += hex.charAt((word >>> shift) & 0xf);
    return out;
  };
  return {
    id: (prefix) => `${prefix}_${chars(idSuffixLength)}`,
    chars,
    uuid: () => {
      const w0 = hexWord(prng.uint32());
      // Version 4 in the 13th hex digit, RFC 4122 variant in the 17th.
      const w1 = hexWord(((prng.uint32() & 0xffff0fff) | 0x00004000) >>> 0);
      const w2 = hexWord(((prng.uint32() & 0x3fffffff) | 0x80000000) >>> 0);
      const w3 = hexWord(prng.uint32());
      return `${w0}-${w1.slice(0, 4)}-${w1.slice(4)}-${w2.slice(0, 4)}-${w2.slice(4)}${w3}`;
    },
  };
}
