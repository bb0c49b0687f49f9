import type { CommonQueryMethods } from 'slonik';
import { sql } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import {
  keyHolderAccessRow,
  memberAccessRow,
  tenantStatusRow,
  type KeyHolderAccessRow,
  type MemberAccessRow,
  type TenantStatusRow,
} from './schema.js';

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
 * What a request made with a key of `memberId` depends on, in one statement: the tenant's and the
 * member's status and the member's latest deactivation. Undefined when either is unknown.
 */
export async function keyHolderAccess(db: CommonQueryMethods, tenantId: string, memberId: string): Promise<KeyHolderAccessRow | undefined> {
  const row = await db.maybeOne(sql.type(withoutNullColumns(keyHolderAccessRow))`
    SELECT t.status AS "tenantStatus", m.status AS "memberStatus", m.last_deactivated_at AS "lastDeactivatedAt"
    FROM read_models.tenants AS t
    JOIN read_models.members AS m ON m.tenant_id = t.tenant_id
    WHERE t.tenant_id = ${tenantId} AND m.tenant_id = ${tenantId} AND m.member_id = ${memberId}
  `);
  return row ?? undefined;
}
