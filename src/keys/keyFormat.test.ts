import { describe, expect, test } from 'vitest';
import { checksumOf, generateKey, hashKey, isWellFormedKey, keyPrefix } from './keyFormat.js';

describe('API key format', () => {
  test('a generated key has the documented shape and passes its own checksum', () => {
    const key = generateKey();
    expect(key).toMatch(/^svc_test_[0-9A-Za-z]{24}_[0-9A-Za-z]{4}$/);
    expect(isWellFormedKey(key)).toBe(true);
    expect(keyPrefix(key)).toHaveLength(12);
    expect(keyPrefix(key).startsWith('svc_test_')).toBe(true);
  });

  test('keys are random', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateKey()));
    expect(keys.size).toBe(200);
  });

  test('the checksum is CRC-32 of the secret in four base62 digits (known answers)', () => {
    // crc32('abc') = 891568578; mod 62^4 = 4988418 = 20·62³ + 57·62² + 44·62 + 22 → K v i M.
    expect(checksumOf('abc')).toBe('KviM');
    expect(checksumOf('000000000000000000000000')).toMatch(/^[0-9A-Za-z]{4}$/);
  });

  test.each([
    ['one character changed in the secret', (key: string) => key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11)],
    ['checksum changed', (key: string) => key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a')],
    ['truncated', (key: string) => key.slice(0, -1)],
    ['quoted', (key: string) => `"${key}"`],
    ['trailing line break', (key: string) => `${key}\n`],
    ['other environment', (key: string) => key.replace('svc_test_', 'svc_live_')],
    ['lower-cased', (key: string) => key.toLowerCase()],
  ])('a key %s is rejected', (_name, mutate) => {
    let key = generateKey();
    // Lower-casing a key made only of digits and lower-case letters would not change it.
    while (key.toLowerCase() === key) key = generateKey();
    expect(isWellFormedKey(mutate(key))).toBe(false);
  });

  test('the stored hash is SHA-256 hex and never the key', () => {
    const key = generateKey();
    const hash = hashKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(key.slice(9, 33));
    expect(hashKey(key)).toBe(hash);
  });
});
