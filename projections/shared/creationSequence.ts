import type { CommonQueryMethods, IdentifierSqlToken } from 'slonik';
import { z } from 'zod';
import { sql } from '../../src/platform/sql.js';

/**
 * The highest `creation_seq` of each of these tenants in `table` (0 for a tenant without rows),
 * in one query. A projection numbers the records a batch creates from there, in log order, so
 * that records created later always sort last and cursors stay stable.
 */
export async function lastCreationSequences(db: CommonQueryMethods, table: IdentifierSqlToken, tenantIds: readonly string[]): Promise<Map<string, bigint>> {
  const tenants = [...new Set(tenantIds)];
  if (tenants.length === 0) return new Map();
  const rows = await db.any(sql.type(z.object({ tenantId: z.string(), lastSeq: z.bigint() }))`
    SELECT t.tenant_id AS "tenantId",
      coalesce((SELECT max(r.creation_seq) FROM ${table} AS r WHERE r.tenant_id = t.tenant_id), 0) AS "lastSeq"
    FROM ${sql.unnest(
      tenants.map((tenantId) => [tenantId]),
      ['text'],
    )} AS t(tenant_id)
  `);
  return new Map(rows.map((row) => [row.tenantId, row.lastSeq]));
}
