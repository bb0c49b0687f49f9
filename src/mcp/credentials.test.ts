import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { generateSignInCode, generateToken, hashSecret, isWellFormedToken, normalizeSignInCode } from './credentials.js';

describe('sign-in codes', () => {
  test('are 12 Crockford base32 characters in three groups, and read back as typed in any case or spacing', () => {
    const codes = Array.from({ length: 200 }, generateSignInCode);
    for (const code of codes) {
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
      const stored = code.replace(/-/g, '');
      expect(normalizeSignInCode(code)).toBe(stored);
      expect(normalizeSignInCode(` ${code.toLowerCase().replace(/-/g, ' ')} `)).toBe(stored);
    }
    expect(new Set(codes).size).toBe(codes.length);
  });

  test('letters people confuse with digits read as those digits; anything else is no code', () => {
    expect(normalizeSignInCode('OIL0-1111-2222')).toBe('011011112222');
    expect(normalizeSignInCode('ABCD-EFGH-JKMU')).toBeUndefined();
    expect(normalizeSignInCode('ABCD-EFGH-JKM')).toBeUndefined();
    expect(normalizeSignInCode('ABCD-EFGH-JKMNP')).toBeUndefined();
    expect(normalizeSignInCode('')).toBeUndefined();
  });
});

describe('tokens', () => {
  test('carry their kind, never the API key form, 256 random bits and a checksum', () => {
    expect(generateToken('access')).toMatch(/^dsa_at_[0-9A-Za-z]{43}_[0-9A-Za-z]{4}$/);
    expect(generateToken('refresh')).toMatch(/^dsa_rt_[0-9A-Za-z]{43}_[0-9A-Za-z]{4}$/);
    expect(generateToken('code')).toMatch(/^dsa_ac_[0-9A-Za-z]{43}_[0-9A-Za-z]{4}$/);
    expect(generateToken('access')).not.toBe(generateToken('access'));
  });

  test('a random, mistyped, truncated or other-kind token fails its format before any lookup', () => {
    const access = generateToken('access');
    expect(isWellFormedToken('access', access)).toBe(true);
    expect(isWellFormedToken('refresh', access)).toBe(false);
    expect(isWellFormedToken('code', access.replace('dsa_at_', 'dsa_ac_'))).toBe(false);
    const last = access.charAt(10) === 'A' ? 'B' : 'A';
    expect(isWellFormedToken('access', access.slice(0, 10) + last + access.slice(11))).toBe(false);
    expect(isWellFormedToken('access', access.slice(0, -1))).toBe(false);
    expect(isWellFormedToken('access', `dsa_at_${'A'.repeat(43)}`)).toBe(false);
    expect(isWellFormedToken('access', `dsa_at_${'A'.repeat(43)}_AAAA`)).toBe(false);
    expect(isWellFormedToken('access', ` ${access}`)).toBe(false);
    // Before the checksum, tokens were 43 base64url characters: they are refused now.
    expect(isWellFormedToken('access', `dsa_at_${'A'.repeat(42)}-`)).toBe(false);
    const refused = Array.from({ length: 2000 }, () => `dsa_at_${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}_${randomBytes(3).toString('base64url').replace(/[-_]/g, 'x')}`);
    // A random candidate passes with odds of about 1 in 62^4 (15 million).
    expect(refused.filter((token) => isWellFormedToken('access', token))).toEqual([]);
  });

  test('are stored as SHA-256 in lowercase hex', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
