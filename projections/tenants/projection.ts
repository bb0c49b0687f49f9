import { sql } from '../../src/platform/sql.js';
import {
  expectRowCount,
  inMemoryFolding,
  ProjectionInvariantError,
  type ProjectionContext,
  type Projection,
  type ProjectedEvent,
  type TableDefinition,
} from '../../src/projecting/projection.js';
import { RowChanges } from '../../src/projecting/rowChanges.js';
import type { MemberStatus, TenantStatus } from './schema.js';

type TenantRecord = {
  tenantId: string;
  name: string;
  status: TenantStatus;
  updatedAt: string;
};

type TenantPatch = Pick<TenantRecord, 'tenantId' | 'status' | 'updatedAt'>;

/** A member as keys need it: no name or email, which /v1 never shows and analytics must not hold. */
type MemberRecord = {
  tenantId: string;
  memberId: string;
  role: string;
  permissions: readonly string[];
  status: MemberStatus;
  lastDeactivatedAt: string | null;
  joinedAt: string;
  updatedAt: string;
};

/** `lastDeactivatedAt` null: this change deactivates nothing (an earlier deactivation stays). */
type MemberPatch = Pick<MemberRecord, 'tenantId' | 'memberId' | 'status' | 'lastDeactivatedAt' | 'updatedAt'>;

const tables: readonly TableDefinition[] = [
  {
    name: 'tenants',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('tenants')} (
          tenant_id text COLLATE "C" NOT NULL,
          name text NOT NULL,
          status text NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id)
        )
      `,
    ],
  },
  {
    name: 'members',
    create: (table) => [
      // last_deactivated_at: a key stays refused after its member is reactivated (key lifecycle),
      // so auth refuses every key created at or before the member's latest suspension or removal.
      sql.typeAlias('void')`
        CREATE TABLE ${table('members')} (
          tenant_id text COLLATE "C" NOT NULL,
          member_id text COLLATE "C" NOT NULL,
          role text NOT NULL,
          permissions text[] NOT NULL,
          status text NOT NULL,
          last_deactivated_at timestamptz,
          joined_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, member_id)
        )
      `,
    ],
  },
];

/** Workspaces and members as a fold: each row's changes coalesce into one row to insert or one patch to apply. */
const tenantsFolding = inMemoryFolding(
  () => ({
    tenants: new RowChanges<TenantRecord, TenantPatch>('tenant'),
    members: new RowChanges<MemberRecord, MemberPatch>('member', {
      applyTo: (row, patch) => ({ ...row, ...combineMemberPatches(row, patch) }),
      combine: combineMemberPatches,
    }),
  }),
  (event, { tenants, members }) => foldEvent(event, tenants, members),
  ({ tenants, members }, context) => writeTenants(tenants, members, context),
);

/** Workspaces (tenants) and their members: what API key authentication checks on every request. */
export const tenantsProjection: Projection = {
  name: 'tenants',
  version: 1,
  tables,
  handles: ['WorkspaceCreated', 'WorkspaceSuspended', 'WorkspaceReactivated', 'MemberJoined', 'MemberSuspended', 'MemberReactivated', 'MemberRemoved'],
  fold: tenantsFolding,
  governsAccess: true,
};

/** One INSERT of the rows created, one UPDATE of the others' combined patches, per table. */
async function writeTenants(tenants: RowChanges<TenantRecord, TenantPatch>, members: RowChanges<MemberRecord, MemberPatch>, { db, table }: ProjectionContext): Promise<void> {
  if (tenants.created.length > 0) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('tenants')} (tenant_id, name, status, updated_at)
      SELECT * FROM ${sql.unnest(
        tenants.created.map((t) => [t.tenantId, t.name, t.status, t.updatedAt]),
        ['text', 'text', 'text', 'timestamptz'],
      )}
    `);
  }
  if (tenants.patches.length > 0) {
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('tenants')} AS t
      SET status = p.status, updated_at = p.updated_at
      FROM ${sql.unnest(
        tenants.patches.map((t) => [t.tenantId, t.status, t.updatedAt]),
        ['text', 'text', 'timestamptz'],
      )} AS p(tenant_id, status, updated_at)
      WHERE t.tenant_id = p.tenant_id
    `);
    expectRowCount('tenant update', result.rowCount, tenants.patches.length);
  }
  if (members.created.length > 0) {
    // unnest cannot carry one array per row (it flattens them), so permissions travel as JSON.
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('members')} (tenant_id, member_id, role, permissions, status, last_deactivated_at, joined_at, updated_at)
      SELECT
        m.tenant_id, m.member_id, m.role,
        ARRAY(SELECT e.value FROM jsonb_array_elements_text(m.permissions) WITH ORDINALITY AS e(value, n) ORDER BY e.n),
        m.status, m.last_deactivated_at, m.joined_at, m.updated_at
      FROM ${sql.unnest(
        members.created.map((m) => [
          m.tenantId,
          m.memberId,
          m.role,
          JSON.stringify(m.permissions),
          m.status,
          m.lastDeactivatedAt,
          m.joinedAt,
          m.updatedAt,
        ]),
        ['text', 'text', 'text', 'jsonb', 'text', 'timestamptz', 'timestamptz', 'timestamptz'],
      )} AS m(tenant_id, member_id, role, permissions, status, last_deactivated_at, joined_at, updated_at)
    `);
  }
  if (members.patches.length > 0) {
    // Same rules as combineMemberPatches, against the stored row.
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('members')} AS m
      SET
        status = CASE WHEN m.status = 'removed' THEN m.status ELSE p.status END,
        last_deactivated_at = greatest(m.last_deactivated_at, p.last_deactivated_at),
        updated_at = p.updated_at
      FROM ${sql.unnest(
        members.patches.map((m) => [m.tenantId, m.memberId, m.status, m.lastDeactivatedAt, m.updatedAt]),
        ['text', 'text', 'text', 'timestamptz', 'timestamptz'],
      )} AS p(tenant_id, member_id, status, last_deactivated_at, updated_at)
      WHERE m.tenant_id = p.tenant_id AND m.member_id = p.member_id
    `);
    expectRowCount('member update', result.rowCount, members.patches.length);
  }
}

/**
 * A later change after an earlier one (or after a row). Removal is final, as in the console. The
 * latest deactivation is the greatest recordedAt, not the last one in log order: the log's
 * recording times need not be monotonic, and the later time refuses more keys, never fewer.
 */
function combineMemberPatches(earlier: Pick<MemberRecord, 'status' | 'lastDeactivatedAt'>, later: MemberPatch): MemberPatch {
  return {
    ...later,
    status: earlier.status === 'removed' ? 'removed' : later.status,
    lastDeactivatedAt: latest(earlier.lastDeactivatedAt, later.lastDeactivatedAt),
  };
}

/** ISO 8601 UTC timestamps with milliseconds order as strings. */
function latest(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

function foldEvent(event: ProjectedEvent, tenants: RowChanges<TenantRecord, TenantPatch>, members: RowChanges<MemberRecord, MemberPatch>): void {
  const { tenantId, occurredAt: updatedAt, recordedAt } = event;
  switch (event.type) {
    case 'WorkspaceCreated': {
      const { workspaceId, name } = event.data;
      expectOwnWorkspace(tenantId, workspaceId);
      tenants.create(tenantId, '', { tenantId, name, status: 'active', updatedAt });
      break;
    }
    case 'WorkspaceSuspended':
      expectOwnWorkspace(tenantId, event.data.workspaceId);
      tenants.change(tenantId, '', { tenantId, status: 'suspended', updatedAt });
      break;
    case 'WorkspaceReactivated':
      expectOwnWorkspace(tenantId, event.data.workspaceId);
      tenants.change(tenantId, '', { tenantId, status: 'active', updatedAt });
      break;
    case 'MemberJoined': {
      const { memberId, role, permissions } = event.data;
      members.create(tenantId, memberId, {
        tenantId,
        memberId,
        role,
        permissions,
        status: 'active',
        lastDeactivatedAt: null,
        joinedAt: updatedAt,
        updatedAt,
      });
      break;
    }
    case 'MemberSuspended':
    case 'MemberRemoved': {
      const { memberId } = event.data;
      const status = event.type === 'MemberSuspended' ? 'suspended' : 'removed';
      members.change(tenantId, memberId, { tenantId, memberId, status, lastDeactivatedAt: recordedAt, updatedAt });
      break;
    }
    case 'MemberReactivated': {
      const { memberId } = event.data;
      members.change(tenantId, memberId, { tenantId, memberId, status: 'active', lastDeactivatedAt: null, updatedAt });
      break;
    }
    default:
      break;
  }
}

/** The envelope's tenant is the one authority; an event naming another workspace must not touch it. */
function expectOwnWorkspace(tenantId: string, workspaceId: string): void {
  if (workspaceId !== tenantId) {
    throw new ProjectionInvariantError(`workspace ${workspaceId} in an event of tenant ${tenantId}`);
  }
}
