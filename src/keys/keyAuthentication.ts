import { timingSafeEqual } from 'node:crypto';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { keyHolderAccessJoin } from '../../projections/tenants/queries.js';
import { memberStatus, tenantStatus } from '../../projections/tenants/schema.js';
import { sql } from '../platform/sql.js';
import { hashKey, keyPrefix, keyShapeOf } from './keyFormat.js';

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
 * Why a key was refused, for the operator's log only: every refusal answers the same 401. `missing`
 * and `scheme` concern the header, `malformed` and `checksum` the key's text (refused before
 * any lookup), `unknown` (no key has its prefix) and `mismatch` (one has, but not this secret) the
 * lookup, the others the key's state or its holder's.
 */
export type KeyRefusalReason =
  | 'missing'
  | 'scheme'
  | 'malformed'
  | 'checksum'
  | 'unknown'
  | 'mismatch'
  | 'revoked'
  | 'tenant_unknown'
  | 'tenant_suspended'
  | 'member_suspended'
  | 'member_removed'
  | 'member_unknown'
  | 'member_deactivated_since_issued';

/**
 * A refusal as logged: the reason and, when the text presented has the key format, its 12-character
 * prefix (the part of a key that is stored in clear). Never more of the key.
 */
export type KeyRefusal = { readonly reason: KeyRefusalReason; readonly keyPrefix?: string };

export type KeyCheck = { readonly principal: Principal; readonly refusal?: undefined } | { readonly principal?: undefined; readonly refusal: KeyRefusal };

/**
 * The principal of a presented key, or why it is refused: malformed or wrong checksum (refused
 * before any lookup), unknown, revoked, its member not active or deactivated since the key was
 * created, its tenant suspended. One statement, nothing cached, so revocation and suspension act
 * on the very next request.
 */
export async function checkKey(db: CommonQueryMethods, presented: string): Promise<KeyCheck> {
  const shape = keyShapeOf(presented);
  if (shape === 'malformed') return { refusal: { reason: 'malformed' } };
  const prefix = keyPrefix(presented);
  if (shape === 'checksum') return { refusal: { reason: 'checksum', keyPrefix: prefix } };
  // Looked up by the public prefix (the tenant is not known yet); the secret is compared as hashes in constant time.
  const key = await db.maybeOne(sql.type(keyWithHolderRow)`
    SELECT k.tenant_id AS "tenantId", k.prefix, k.member_id AS "memberId", k.key_hash AS "keyHash", k.scopes, k.status,
      k.created_at AS "createdAt", holder.tenant_status AS "tenantStatus", holder.member_status AS "memberStatus",
      holder.last_deactivated_at AS "lastDeactivatedAt"
    FROM api_keys AS k
    ${keyHolderAccessJoin(sql.identifier(['k', 'tenant_id']), sql.identifier(['k', 'member_id']))}
    WHERE k.prefix = ${prefix}
  `);
  const refused = (reason: KeyRefusalReason): KeyCheck => ({ refusal: { reason, keyPrefix: prefix } });
  if (key === null) return refused('unknown');
  if (!sameHash(key.keyHash, hashKey(presented))) return refused('mismatch');
  if (key.status !== 'active') return refused('revoked');
  // No workspace row: the projector has not applied the workspace's events (yet), which is not a suspension.
  if (key.tenantStatus === null) return refused('tenant_unknown');
  if (key.tenantStatus !== 'active') return refused('tenant_suspended');
  if (key.memberStatus !== 'active') return refused(key.memberStatus === 'suspended' ? 'member_suspended' : key.memberStatus === 'removed' ? 'member_removed' : 'member_unknown');
  if (key.lastDeactivatedAt !== null && Date.parse(key.lastDeactivatedAt) >= Date.parse(key.createdAt)) return refused('member_deactivated_since_issued');
  return { principal: { tenantId: key.tenantId, prefix: key.prefix, memberId: key.memberId, scopes: key.scopes } };
}

/** The principal of a presented key, or undefined for every kind of key problem alike (see `checkKey`). */
export async function authenticateKey(db: CommonQueryMethods, presented: string): Promise<Principal | undefined> {
  return (await checkKey(db, presented)).principal;
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
