import { createHash, randomBytes, randomInt } from 'node:crypto';

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

/** Opaque bearer credentials: a kind prefix (never a key's `svc_` form) and 256 random bits. */
export function generateToken(kind: 'access' | 'refresh' | 'code'): string {
  const prefix = kind === 'access' ? 'dsa_at_' : kind === 'refresh' ? 'dsa_rt_' : 'dsa_ac_';
  return prefix + randomBytes(32).toString('base64url');
}
