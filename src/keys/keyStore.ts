import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { commitToStandbys } from '../platform/db.js';
import { awaitLeasedStandbys } from '../platform/readLeases.js';
import { sql } from '../platform/sql.js';

const keyRow = z.object({
  tenantId: z.string(),
  prefix: z.string(),
  name: z.string(),
  memberId: z.string(),
  scopes: z.array(z.string()),
  status: z.enum(['active', 'revoked']),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});
export type StoredKey = z.infer<typeof keyRow>;

const keyColumns = sql.fragment`
  tenant_id AS "tenantId", prefix, name, member_id AS "memberId", scopes, status,
  created_at AS "createdAt", revoked_at AS "revokedAt"
`;

/** Serialises key issuance per tenant so that the limit of active keys holds under concurrency. */
export async function lockTenantKeys(connection: DatabaseTransactionConnection, tenantId: string): Promise<void> {
  await connection.query(sql.typeAlias('void')`SELECT FROM pg_advisory_xact_lock(hashtext(${`api_keys:${tenantId}`}))`);
}

export async function countActiveKeys(connection: DatabaseTransactionConnection, tenantId: string): Promise<number> {
  return connection.oneFirst(
    sql.type(z.object({ count: z.number().int() }))`
      SELECT count(*)::int AS count FROM api_keys WHERE tenant_id = ${tenantId} AND status = 'active'
    `,
  );
}

export async function prefixTaken(connection: DatabaseTransactionConnection, prefix: string): Promise<boolean> {
  return connection.exists(sql.type(z.object({ found: z.number() }))`SELECT 1 AS found FROM api_keys WHERE prefix = ${prefix}`);
}

export async function insertKey(
  connection: DatabaseTransactionConnection,
  key: { tenantId: string; prefix: string; keyHash: string; name: string; memberId: string; scopes: readonly string[]; createdAt: string },
): Promise<void> {
  await connection.query(sql.typeAlias('void')`
    INSERT INTO api_keys (tenant_id, prefix, key_hash, name, member_id, scopes, status, created_at)
    VALUES (${key.tenantId}, ${key.prefix}, ${key.keyHash}, ${key.name}, ${key.memberId},
            ${sql.array(key.scopes, 'text')}, 'active', ${key.createdAt})
  `);
}

export async function findKeyByPrefix(pool: DatabasePool | DatabaseTransactionConnection, prefix: string): Promise<StoredKey | null> {
  return pool.maybeOne(sql.type(keyRow)`SELECT ${keyColumns} FROM api_keys WHERE prefix = ${prefix}`);
}

/**
 * Revokes an active key; returns the key as it now stands, or null when no key has that prefix.
 * The revocation commits to the synchronous standbys (`commitToStandbys`), then waits for every
 * standby under a read lease (`awaitLeasedStandbys`): once this resolves, no read statement of
 * the key succeeds anywhere.
 */
export async function markKeyRevoked(pool: DatabasePool, prefix: string, at: string): Promise<StoredKey | null> {
  const revoked = await pool.transaction(async (transaction) => {
    await commitToStandbys(transaction);
    await transaction.query(sql.typeAlias('void')`
      UPDATE api_keys SET status = 'revoked', revoked_at = ${at}
      WHERE prefix = ${prefix} AND status = 'active'
    `);
    return findKeyByPrefix(transaction, prefix);
  });
  // Every standby some API process may read from under a lease has applied it (readLeases.ts).
  await awaitLeasedStandbys(pool);
  return revoked;
}

export async function listKeys(pool: DatabasePool, tenantId: string): Promise<readonly StoredKey[]> {
  return pool.any(sql.type(keyRow)`
    SELECT ${keyColumns} FROM api_keys WHERE tenant_id = ${tenantId} ORDER BY created_at, prefix
  `);
}
