import type { Principal } from './keyAuthentication.js';

/**
 * The principals of keys this process has authenticated, by the SHA-256 of the presented key
 * (never the key). What it holds never changes for a key (tenant, member, prefix, scopes); whether
 * the key may still read is not cached: every read statement checks it (`keyAccessGuard`).
 * Bounded: beyond `maxEntries` the oldest entry goes first.
 */
export type PrincipalCache = {
  get(keyHash: string): Principal | undefined;
  set(keyHash: string, principal: Principal): void;
  delete(keyHash: string): void;
};

export function createPrincipalCache(maxEntries = 10_000): PrincipalCache {
  const entries = new Map<string, Principal>();
  return {
    get: (keyHash) => entries.get(keyHash),
    set: (keyHash, principal) => {
      entries.delete(keyHash);
      entries.set(keyHash, principal);
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
    },
    delete: (keyHash) => {
      entries.delete(keyHash);
    },
  };
}
