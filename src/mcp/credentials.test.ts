import { describe, expect, test } from 'vitest';
import { generateSignInCode, generateToken, hashSecret, normalizeSignInCode } from './credentials.js';

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
  test('carry their kind, never the API key form, and 256 random bits', () => {
    expect(generateToken('access')).toMatch(/^dsa_at_[A-Za-z0-9_-]{43}$/);
    expect(generateToken('refresh')).toMatch(/^dsa_rt_[A-Za-z0-9_-]{43}$/);
    expect(generateToken('code')).toMatch(/^dsa_ac_[A-Za-z0-9_-]{43}$/);
    expect(generateToken('access')).not.toBe(generateToken('access'));
  });

  test('are stored as SHA-256 in lowercase hex', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
