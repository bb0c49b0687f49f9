import { createHash, randomInt } from 'node:crypto';
import { checksumOf, hasChecksum, randomBase62 } from '../keys/keyFormat.js';

/** Secrets, codes and tokens are stored only as this: SHA-256, lowercase hex. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

// Crockford's base32 alphabet: no I, L, O or U, so a code read aloud or typed is not misread.
const codeAlphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const codeLength = 12;

/** A sign-in code for a person to type: 12 characters (60 bits) in groups of four, e.g. `7KQ2-M9XD-4HTR`. */
export function generateSignInCode(): string {
  let code = '';
  for (let i = 0; i < codeLength; i += 1) code += codeAlphabet.charAt(randomInt(codeAlphabet.length));
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
}

/**
 * A typed sign-in code in its stored form: case, spaces and dashes ignored, and the letters people
 * confuse with digits read as those digits (Crockford); undefined when it cannot be a code at all.
 */
export function normalizeSignInCode(typed: string): string | undefined {
  const compact = typed
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/[IL]/g, '1')
    .replace(/O/g, '0');
  return compact.length === codeLength && [...compact].every((character) => codeAlphabet.includes(character)) ? compact : undefined;
}

export type TokenKind = 'access' | 'refresh' | 'code';

const tokenPrefixes: Readonly<Record<TokenKind, string>> = { access: 'dsa_at_', refresh: 'dsa_rt_', code: 'dsa_ac_' };
const tokenPattern = /^(dsa_(?:at|rt|ac)_[0-9A-Za-z]{43})_([0-9A-Za-z]{4})$/;

/**
 * Opaque bearer credentials: `dsa_at_` (access token), `dsa_rt_` (refresh token) or `dsa_ac_`
 * (authorization code), 43 base62 characters (256 random bits), `_` and the checksum of what comes
 * before it, as an API key's (never a key's `svc_` form). A random or mistyped one fails the
 * checksum and is refused without a database lookup.
 */
export function generateToken(kind: TokenKind): string {
  const body = tokenPrefixes[kind] + randomBase62(43);
  return `${body}_${checksumOf(body)}`;
}

/** True when the text has the token format of this kind and a correct checksum. */
export function isWellFormedToken(kind: TokenKind, text: string): boolean {
  const match = tokenPattern.exec(text);
  if (!match?.[1] || !match[2] || !match[1].startsWith(tokenPrefixes[kind])) return false;
  return hasChecksum(match[1], match[2]);
}
