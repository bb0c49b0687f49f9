import { timingSafeEqual } from 'node:crypto';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { keyHolderAccessJoin } from '../../projections/tenants/queries.js';
import { memberStatus, tenantStatus } from '../../projections/tenants/schema.js';
import { sql } from '../platform/sql.js';
import { hashKey, isWellFormedKey, keyPrefix } from './keyFormat.js';

/** Who a request is made for: the key's tenant, its prefix (the budget's key) and its scopes. */
export type Principal = {
  readonly tenantId: string;
  readonly prefix: string;
  readonly memberId: string;
  readonly scopes: readonly string[];
};

const keyWithHolderRow = z.object({
  tenantId: z.string(),
  prefix: z.string(),
  memberId: z.string(),
  keyHash: z.string(),
  scopes: z.array(z.string()),
  status: z.enum(['active', 'revoked']),
  createdAt: z.string(),
  tenantStatus: tenantStatus.nullable(),
  memberStatus: memberStatus.nullable(),
  lastDeactivatedAt: z.string().nullable(),
});

/**
 * The principal of a presented key, or undefined for every kind of key problem alike: malformed or
 * wrong checksum (refused before any lookup), unknown, revoked, its member not active or
 * deactivated since the key was created, its tenant suspended. One statement, nothing cached, so
 * revocation and suspension act on the very next request.
 */
export async function authenticateKey(db: CommonQueryMethods, presented: string): Promise<Principal | undefined> {
  if (!isWellFormedKey(presented)) return undefined;
  // Looked up by the public prefix (the tenant is not known yet); the secret is compared as hashes in constant time.
  const key = await db.maybeOne(sql.type(keyWithHolderRow)`
    SELECT k.tenant_id AS "tenantId", k.prefix, k.member_id AS "memberId", k.key_hash AS "keyHash", k.scopes, k.status,
      k.created_at AS "createdAt", holder.tenant_status AS "tenantStatus", holder.member_status AS "memberStatus",
      holder.last_deactivated_at AS "lastDeactivatedAt"
    FROM api_keys AS k
    ${keyHolderAccessJoin(sql.identifier(['k', 'tenant_id']), sql.identifier(['k', 'member_id']))}
    WHERE k.prefix = ${keyPrefix(presented)}
  `);
  if (key === null || !sameHash(key.keyHash, hashKey(presented)) || key.status !== 'active') return undefined;
  if (key.tenantStatus !== 'active' || key.memberStatus !== 'active') return undefined;
  if (key.lastDeactivatedAt !== null && Date.parse(key.lastDeactivatedAt) >= Date.parse(key.createdAt)) return undefined;
  return { tenantId: key.tenantId, prefix: key.prefix, memberId: key.memberId, scopes: key.scopes };
}

/**
 * A condition for the WHERE clause of a read statement made for `principal`: true while its key is
 * active, its member active and not deactivated since the key was created, and its tenant active;
 * otherwise the statement fails with SQLSTATE `accessRefusedCode` before it reads a row. The read
 * and the key check thus travel in one statement, evaluated in that statement's snapshot:
 * revocation and suspension act on the very next request even when the principal came from a cache.
 * Uncorrelated and STABLE, so Postgres evaluates it once, as a one-time filter ahead of the scan.
 */
export function keyAccessGuard(principal: Principal): FragmentSqlToken {
  const { tenantId, prefix, memberId } = principal;
  return sql.fragment`(SELECT CASE WHEN EXISTS (
      SELECT FROM api_keys AS k
      JOIN read_models.tenants AS t ON t.tenant_id = k.tenant_id
      JOIN read_models.members AS m ON m.tenant_id = k.tenant_id AND m.member_id = k.member_id
      WHERE k.tenant_id = ${tenantId} AND k.prefix = ${prefix} AND k.member_id = ${memberId} AND k.status = 'active'
        AND t.tenant_id = ${tenantId} AND t.status = 'active'
        AND m.tenant_id = ${tenantId} AND m.member_id = ${memberId} AND m.status = 'active'
        AND (m.last_deactivated_at IS NULL OR m.last_deactivated_at < k.created_at)
    ) THEN true ELSE access_refused() END)`;
}

function sameHash(storedHex: string, presentedHex: string): boolean {
  const a = Buffer.from(storedHex, 'hex');
  const b = Buffer.from(presentedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
