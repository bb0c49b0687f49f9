import type { CommonQueryMethods, FragmentSqlToken, IdentifierSqlToken } from 'slonik';
import { sql } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { memberAccessRow, tenantStatusRow, type MemberAccessRow, type TenantStatusRow } from './schema.js';

/** The tenant's status, or undefined for a tenant the log never created. */
export async function tenantStatus(db: CommonQueryMethods, tenantId: string): Promise<TenantStatusRow | undefined> {
  const row = await db.maybeOne(sql.type(tenantStatusRow)`
    SELECT status
    FROM read_models.tenants
    WHERE tenant_id = ${tenantId}
  `);
  return row ?? undefined;
}

/** Status, permissions and latest deactivation of one member, or undefined for an unknown one. */
export async function memberAccess(db: CommonQueryMethods, tenantId: string, memberId: string): Promise<MemberAccessRow | undefined> {
  const row = await db.maybeOne(sql.type(withoutNullColumns(memberAccessRow))`
    SELECT status, permissions, last_deactivated_at AS "lastDeactivatedAt"
    FROM read_models.members
    WHERE tenant_id = ${tenantId} AND member_id = ${memberId}
  `);
  return row ?? undefined;
}

/**
 * What a request made with a key depends on, joined to the key's row in the same statement (keys
 * are checked on every request): the tenant's and the member's status and the member's latest
 * deactivation, as columns `tenant_status`, `member_status` and `last_deactivated_at` of `holder`
 * (all NULL when the tenant is unknown; the member's two when only the member is). `tenantId` and `memberId` are columns of the outer query.
 */
export function keyHolderAccessJoin(tenantId: IdentifierSqlToken, memberId: IdentifierSqlToken): FragmentSqlToken {
  return sql.fragment`
    LEFT JOIN LATERAL (
      SELECT t.status AS tenant_status, m.status AS member_status, m.last_deactivated_at
      FROM read_models.tenants AS t
      LEFT JOIN read_models.members AS m ON m.tenant_id = ${tenantId} AND m.member_id = ${memberId}
      WHERE t.tenant_id = ${tenantId}
    ) AS holder ON true
  `;
}
