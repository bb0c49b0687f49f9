import type { CommonQueryMethods, IdentifierSqlToken } from 'slonik';
import { z } from 'zod';
import { sql } from '../../src/platform/sql.js';

/**
 * The highest `creation_seq` in `table` (0 for a tenant without rows) of each of these tenants
 * that `known` does not hold yet, in one query, into `known`. A projection numbers the records a
 * fold creates from there, in log order, so that records created later always sort last and
 * cursors stay stable; the tenants it already knows it numbers on from memory.
 */
export async function loadLastCreationSequences(db: CommonQueryMethods, table: IdentifierSqlToken, tenantIds: readonly string[], known: Map<string, bigint>): Promise<void> {
  const tenants = [...new Set(tenantIds)].filter((tenantId) => !known.has(tenantId));
  if (tenants.length === 0) return;
  const rows = await db.any(sql.type(z.object({ tenantId: z.string(), lastSeq: z.bigint() }))`
    SELECT t.tenant_id AS "tenantId",
      coalesce((SELECT max(r.creation_seq) FROM ${table} AS r WHERE r.tenant_id = t.tenant_id), 0) AS "lastSeq"
    FROM ${sql.unnest(
      tenants.map((tenantId) => [tenantId]),
      ['text'],
    )} AS t(tenant_id)
  `);
  for (const row of rows) known.set(row.tenantId, row.lastSeq);
}
