import type { FragmentSqlToken } from 'slonik';
import { keyAccessGuard, type Principal } from './keyAuthentication.js';

/** A checked key's principal, and the guard its read statements carry (built once). */
export type CachedPrincipal = { readonly principal: Principal; readonly readGuard: FragmentSqlToken };

/**
 * The principals of keys this process has authenticated, by the SHA-256 of the presented key
 * (never the key). What it holds never changes for a key (tenant, member, prefix, scopes); whether
 * the key may still read is not cached: every read statement checks it (`keyAccessGuard`).
 * Bounded: beyond `maxEntries` the oldest entry goes first.
 */
export type PrincipalCache = {
  get(keyHash: string): CachedPrincipal | undefined;
  /** Remembers the principal of a key that has just passed the full check. */
  set(keyHash: string, principal: Principal): CachedPrincipal;
  delete(keyHash: string): void;
};

export function createPrincipalCache(maxEntries = 10_000): PrincipalCache {
  const entries = new Map<string, CachedPrincipal>();
  return {
    get: (keyHash) => entries.get(keyHash),
    set: (keyHash, principal) => {
      const entry = { principal, readGuard: keyAccessGuard(principal) };
      entries.delete(keyHash);
      entries.set(keyHash, entry);
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
      return entry;
    },
    delete: (keyHash) => {
      entries.delete(keyHash);
    },
  };
}
