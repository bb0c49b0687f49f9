import { hash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format: `svc_test_<secret>_<checksum>`.
 * - `svc` fixed prefix, `test` the environment (the only one issued in v1);
 * - secret: 24 characters drawn uniformly from [0-9A-Za-z] with a CSPRNG (≈143 bits);
 * - checksum: CRC-32 (IEEE) of the secret's ASCII bytes, reduced modulo 62^4 and written as 4
 *   base62 digits (most significant first, zero-padded with '0').
 * A mistyped or truncated key fails the format or checksum test before any database lookup.
 * The first 12 characters (`svc_test_` + 3 secret characters) are the key's prefix.
 */
const base62Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const keyPattern = /^svc_test_([0-9A-Za-z]{24})_([0-9A-Za-z]{4})$/;

export const keyPrefixLength = 12;

export function checksumOf(secret: string): string {
  let value = crc32(Buffer.from(secret, 'ascii')) % 62 ** 4;
  let digits = '';
  for (let i = 0; i < 4; i += 1) {
    digits = base62Alphabet.charAt(value % 62) + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}

/** `length` characters drawn uniformly from [0-9A-Za-z] with a CSPRNG. */
export function randomBase62(length: number): string {
  let text = '';
  for (let i = 0; i < length; i += 1) {
    text += base62Alphabet.charAt(randomInt(62));
  }
  return text;
}

export function generateKey(): string {
  const secret = randomBase62(24);
  return `svc_test_${secret}_${checksumOf(secret)}`;
}

/** True when the text has the key format and a correct checksum. */
export function isWellFormedKey(text: string): boolean {
  return keyShapeOf(text) === 'key';
}

/** `key` when well formed; `checksum` when it has the key format but a wrong checksum; else `malformed`. */
export function keyShapeOf(text: string): 'key' | 'checksum' | 'malformed' {
  const match = keyPattern.exec(text);
  if (!match?.[1] || !match[2]) return 'malformed';
  return hasChecksum(match[1], match[2]) ? 'key' : 'checksum';
}

/** Whether `checksum` is the checksum of `text` (compared in constant time). */
export function hasChecksum(text: string, checksum: string): boolean {
  const expected = Buffer.from(checksumOf(text));
  const given = Buffer.from(checksum);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export function keyPrefix(key: string): string {
  return key.slice(0, keyPrefixLength);
}

/** SHA-256 of the key, hex: the only form of the key the service stores. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}
