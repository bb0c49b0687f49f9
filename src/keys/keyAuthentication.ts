import { timingSafeEqual } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { keyHolderAccess } from '../../projections/tenants/queries.js';
import { sql } from '../platform/sql.js';
import { hashKey, isWellFormedKey, keyPrefix } from './keyFormat.js';

/** Who a request is made for: the key's tenant, its prefix (the budget's key) and its scopes. */
export type Principal = {
  readonly tenantId: string;
  readonly prefix: string;
  readonly memberId: string;
  readonly scopes: readonly string[];
};

const storedKeyRow = z.object({
  tenantId: z.string(),
  prefix: z.string(),
  memberId: z.string(),
  keyHash: z.string(),
  scopes: z.array(z.string()),
  status: z.enum(['active', 'revoked']),
  createdAt: z.string(),
});

/**
 * The principal of a presented key, or undefined for every kind of key problem alike: malformed or
 * wrong checksum (refused before any lookup), unknown, revoked, its member not active or
 * deactivated since the key was created, its tenant suspended. Nothing is cached, so revocation and
 * suspension act on the very next request.
 */
export async function authenticateKey(pool: DatabasePool, presented: string): Promise<Principal | undefined> {
  if (!isWellFormedKey(presented)) return undefined;
  // Looked up by the public prefix; the secret part is compared as hashes in constant time.
  const stored = await pool.maybeOne(sql.type(storedKeyRow)`
    SELECT tenant_id AS "tenantId", prefix, member_id AS "memberId", key_hash AS "keyHash", scopes, status,
      created_at AS "createdAt"
    FROM api_keys
    WHERE prefix = ${keyPrefix(presented)}
  `);
  if (stored === null || !sameHash(stored.keyHash, hashKey(presented)) || stored.status !== 'active') return undefined;
  const holder = await keyHolderAccess(pool, stored.tenantId, stored.memberId);
  if (holder === undefined || holder.tenantStatus !== 'active' || holder.memberStatus !== 'active') return undefined;
  if (holder.lastDeactivatedAt !== undefined && Date.parse(holder.lastDeactivatedAt) >= Date.parse(stored.createdAt)) return undefined;
  return { tenantId: stored.tenantId, prefix: stored.prefix, memberId: stored.memberId, scopes: stored.scopes };
}

function sameHash(storedHex: string, presentedHex: string): boolean {
  const a = Buffer.from(storedHex, 'hex');
  const b = Buffer.from(presentedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
