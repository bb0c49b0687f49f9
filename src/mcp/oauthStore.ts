import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { sql } from '../platform/sql.js';

/**
 * Every statement on the OAuth tables of the assistant endpoint. Lookups by a hash come before the
 * tenant is known (as an API key is found by its prefix); everything after names the tenant first.
 */

const clientRow = z.object({
  clientId: z.string(),
  clientSecretHash: z.string().nullable(),
  clientSecretExpiresAt: z.string().nullable(),
  redirectUris: z.array(z.string()),
  metadata: z.record(z.unknown()),
  createdAt: z.string(),
});
export type ClientRow = z.infer<typeof clientRow>;

export async function insertClient(
  db: CommonQueryMethods,
  client: { clientId: string; clientSecretHash: string | null; clientSecretExpiresAt: string | null; redirectUris: readonly string[]; metadata: Record<string, unknown>; createdAt: string },
): Promise<void> {
  await db.query(sql.typeAlias('void')`
    INSERT INTO oauth_clients (client_id, client_secret_hash, client_secret_expires_at, redirect_uris, metadata, created_at)
    VALUES (${client.clientId}, ${client.clientSecretHash}, ${client.clientSecretExpiresAt}, ${sql.array(client.redirectUris, 'text')},
            ${sql.jsonb(JSON.parse(JSON.stringify(client.metadata)) as Parameters<typeof sql.jsonb>[0])}, ${client.createdAt})
  `);
}

export async function findClient(db: CommonQueryMethods, clientId: string): Promise<ClientRow | undefined> {
  const row = await db.maybeOne(sql.type(clientRow)`
    SELECT client_id AS "clientId", client_secret_hash AS "clientSecretHash", client_secret_expires_at AS "clientSecretExpiresAt",
      redirect_uris AS "redirectUris", metadata, created_at AS "createdAt"
    FROM oauth_clients WHERE client_id = ${clientId}
  `);
  return row ?? undefined;
}

export async function insertSignInCode(
  db: CommonQueryMethods,
  code: { tenantId: string; memberId: string; codeHash: string; createdAt: string; expiresAt: string },
): Promise<void> {
  await db.query(sql.typeAlias('void')`
    INSERT INTO oauth_sign_in_codes (tenant_id, code_hash, member_id, created_at, expires_at)
    VALUES (${code.tenantId}, ${code.codeHash}, ${code.memberId}, ${code.createdAt}, ${code.expiresAt})
  `);
}

const signedInRow = z.object({ tenantId: z.string(), memberId: z.string() });

/** Uses a sign-in code once: the member it was handed to, or undefined when unknown, used or expired. */
export async function consumeSignInCode(db: CommonQueryMethods, codeHash: string, now: string): Promise<z.infer<typeof signedInRow> | undefined> {
  const row = await db.maybeOne(sql.type(signedInRow)`
    UPDATE oauth_sign_in_codes SET used_at = ${now}
    WHERE code_hash = ${codeHash} AND used_at IS NULL AND expires_at > ${now}
    RETURNING tenant_id AS "tenantId", member_id AS "memberId"
  `);
  return row ?? undefined;
}

export type NewGrant = {
  tenantId: string;
  grantId: string;
  memberId: string;
  clientId: string;
  scopes: readonly string[];
  resource: string;
  createdAt: string;
};

/** A grant and its authorization code, in one transaction. */
export async function insertGrantWithCode(
  pool: DatabasePool,
  grant: NewGrant,
  code: { codeHash: string; redirectUri: string; codeChallenge: string; expiresAt: string },
): Promise<void> {
  await pool.transaction(async (transaction) => {
    await transaction.query(sql.typeAlias('void')`
      INSERT INTO oauth_grants (tenant_id, grant_id, member_id, client_id, scopes, resource, created_at)
      VALUES (${grant.tenantId}, ${grant.grantId}, ${grant.memberId}, ${grant.clientId}, ${sql.array(grant.scopes, 'text')}, ${grant.resource}, ${grant.createdAt})
    `);
    await transaction.query(sql.typeAlias('void')`
      INSERT INTO oauth_authorization_codes (tenant_id, code_hash, grant_id, client_id, redirect_uri, code_challenge, created_at, expires_at)
      VALUES (${grant.tenantId}, ${code.codeHash}, ${grant.grantId}, ${grant.clientId}, ${code.redirectUri}, ${code.codeChallenge}, ${grant.createdAt}, ${code.expiresAt})
    `);
    await noteClientUse(transaction, grant.clientId, grant.createdAt);
  });
}

/** Remembers that a client was used now (at most one write a client an hour). */
async function noteClientUse(db: CommonQueryMethods, clientId: string, now: string): Promise<void> {
  await db.query(sql.typeAlias('void')`
    UPDATE oauth_clients SET last_used_at = ${now}
    WHERE client_id = ${clientId} AND (last_used_at IS NULL OR last_used_at < ${now}::timestamptz - interval '1 hour')
  `);
}

/**
 * The PKCE challenge a code of this client was issued with, used or not: a replayed code must reach
 * the exchange (with its verifier) to be detected there and revoke its grant.
 */
export async function findCodeChallenge(db: CommonQueryMethods, codeHash: string, clientId: string): Promise<string | undefined> {
  const row = await db.maybeOne(sql.type(z.object({ codeChallenge: z.string() }))`
    SELECT code_challenge AS "codeChallenge" FROM oauth_authorization_codes
    WHERE code_hash = ${codeHash} AND client_id = ${clientId}
  `);
  return row?.codeChallenge;
}

const grantRow = z.object({
  tenantId: z.string(),
  grantId: z.string(),
  memberId: z.string(),
  clientId: z.string(),
  scopes: z.array(z.string()),
  resource: z.string(),
});
export type GrantRow = z.infer<typeof grantRow>;

const usedCodeRow = grantRow.extend({ redirectUri: z.string(), alreadyUsed: z.boolean(), expired: z.boolean() });

/**
 * Uses an authorization code of this client once. A code presented a second time revokes its grant
 * (and so every token issued from it), as OAuth 2.1 asks; answers undefined then too.
 */
export async function consumeAuthorizationCode(
  pool: DatabasePool,
  input: { codeHash: string; clientId: string; redirectUri: string | undefined; now: string },
): Promise<GrantRow | undefined> {
  return pool.transaction(async (transaction) => {
    const code = await transaction.maybeOne(sql.type(usedCodeRow)`
      SELECT c.tenant_id AS "tenantId", c.grant_id AS "grantId", g.member_id AS "memberId", g.client_id AS "clientId", g.scopes, g.resource,
        c.redirect_uri AS "redirectUri", c.used_at IS NOT NULL AS "alreadyUsed", c.expires_at <= ${input.now} AS "expired"
      FROM oauth_authorization_codes AS c
      JOIN oauth_grants AS g ON g.tenant_id = c.tenant_id AND g.grant_id = c.grant_id
      WHERE c.code_hash = ${input.codeHash} AND c.client_id = ${input.clientId} AND g.revoked_at IS NULL
      FOR UPDATE OF c
    `);
    if (code === null) return undefined;
    if (code.alreadyUsed) {
      await revokeGrant(transaction, code.tenantId, code.grantId, input.now);
      return undefined;
    }
    if (code.expired || (input.redirectUri !== undefined && input.redirectUri !== code.redirectUri)) return undefined;
    await transaction.query(sql.typeAlias('void')`
      UPDATE oauth_authorization_codes SET used_at = ${input.now}
      WHERE tenant_id = ${code.tenantId} AND code_hash = ${input.codeHash}
    `);
    const { redirectUri: _redirectUri, alreadyUsed: _alreadyUsed, expired: _expired, ...grant } = code;
    return grant;
  });
}

export async function revokeGrant(db: CommonQueryMethods, tenantId: string, grantId: string, now: string): Promise<void> {
  await db.query(sql.typeAlias('void')`
    UPDATE oauth_grants SET revoked_at = ${now} WHERE tenant_id = ${tenantId} AND grant_id = ${grantId} AND revoked_at IS NULL
  `);
  await db.query(sql.typeAlias('void')`
    UPDATE oauth_tokens SET revoked_at = ${now} WHERE tenant_id = ${tenantId} AND grant_id = ${grantId} AND revoked_at IS NULL
  `);
}

export type NewToken = { tokenHash: string; kind: 'access' | 'refresh'; scopes: readonly string[]; expiresAt: string };

export async function insertTokens(db: CommonQueryMethods, grant: { tenantId: string; grantId: string }, tokens: readonly NewToken[], now: string): Promise<void> {
  for (const token of tokens) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO oauth_tokens (tenant_id, token_hash, grant_id, kind, scopes, created_at, expires_at)
      VALUES (${grant.tenantId}, ${token.tokenHash}, ${grant.grantId}, ${token.kind}, ${sql.array(token.scopes, 'text')}, ${now}, ${token.expiresAt})
    `);
  }
}

const refreshRow = grantRow.extend({ tokenScopes: z.array(z.string()), usable: z.boolean(), alreadyUsed: z.boolean() });

/**
 * Rotates a refresh token of this client: marks it used and runs `issue` for the new pair, in one
 * transaction. A refresh token presented after it was used revokes the whole grant.
 */
export async function rotateRefreshToken<T>(
  pool: DatabasePool,
  input: { tokenHash: string; clientId: string; now: string },
  issue: (db: CommonQueryMethods, grant: GrantRow, tokenScopes: readonly string[]) => Promise<T>,
): Promise<T | undefined> {
  return pool.transaction(async (transaction) => {
    const token = await transaction.maybeOne(sql.type(refreshRow)`
      SELECT t.tenant_id AS "tenantId", t.grant_id AS "grantId", g.member_id AS "memberId", g.client_id AS "clientId", g.scopes, g.resource,
        t.scopes AS "tokenScopes", (t.revoked_at IS NULL AND g.revoked_at IS NULL AND t.expires_at > ${input.now}) AS usable,
        t.used_at IS NOT NULL AS "alreadyUsed"
      FROM oauth_tokens AS t
      JOIN oauth_grants AS g ON g.tenant_id = t.tenant_id AND g.grant_id = t.grant_id
      WHERE t.token_hash = ${input.tokenHash} AND t.kind = 'refresh' AND g.client_id = ${input.clientId}
      FOR UPDATE OF t
    `);
    if (token === null) return undefined;
    if (token.alreadyUsed) {
      await revokeGrant(transaction, token.tenantId, token.grantId, input.now);
      return undefined;
    }
    if (!token.usable) return undefined;
    await transaction.query(sql.typeAlias('void')`
      UPDATE oauth_tokens SET used_at = ${input.now} WHERE tenant_id = ${token.tenantId} AND token_hash = ${input.tokenHash}
    `);
    await noteClientUse(transaction, input.clientId, input.now);
    const { tokenScopes, usable: _usable, alreadyUsed: _alreadyUsed, ...grant } = token;
    return issue(transaction, grant, tokenScopes);
  });
}

/**
 * Revokes a token this client holds: a refresh token ends its whole grant, an access token only
 * itself. Unknown tokens and other clients' tokens are ignored (RFC 7009).
 */
export async function revokeClientToken(db: DatabasePool, input: { tokenHash: string; clientId: string; now: string }): Promise<void> {
  await db.transaction(async (transaction) => {
    const token = await transaction.maybeOne(sql.type(z.object({ tenantId: z.string(), grantId: z.string(), kind: z.enum(['access', 'refresh']) }))`
      SELECT t.tenant_id AS "tenantId", t.grant_id AS "grantId", t.kind
      FROM oauth_tokens AS t
      JOIN oauth_grants AS g ON g.tenant_id = t.tenant_id AND g.grant_id = t.grant_id
      WHERE t.token_hash = ${input.tokenHash} AND g.client_id = ${input.clientId}
    `);
    if (token === null) return;
    if (token.kind === 'refresh') {
      await revokeGrant(transaction, token.tenantId, token.grantId, input.now);
      return;
    }
    await transaction.query(sql.typeAlias('void')`
      UPDATE oauth_tokens SET revoked_at = ${input.now}
      WHERE tenant_id = ${token.tenantId} AND token_hash = ${input.tokenHash} AND revoked_at IS NULL
    `);
  });
}

const accessRow = grantRow.extend({ expiresAt: z.string(), permissions: z.array(z.string()) });
export type AccessRow = z.infer<typeof accessRow>;

/**
 * The access token's grant and its member's permissions, only while everything it depends on
 * holds: the token and its grant unrevoked and unexpired, the tenant active, the member active and
 * not deactivated since the grant was made (a reactivated member signs in again). One statement,
 * nothing cached, so suspension and revocation act on the very next request.
 */
export async function findUsableAccessToken(db: CommonQueryMethods, tokenHash: string, now: string): Promise<AccessRow | undefined> {
  const row = await db.maybeOne(sql.type(accessRow)`
    SELECT t.tenant_id AS "tenantId", t.grant_id AS "grantId", g.member_id AS "memberId", g.client_id AS "clientId", t.scopes, g.resource,
      t.expires_at AS "expiresAt", m.permissions
    FROM oauth_tokens AS t
    JOIN oauth_grants AS g ON g.tenant_id = t.tenant_id AND g.grant_id = t.grant_id
    JOIN read_models.tenants AS tn ON tn.tenant_id = t.tenant_id
    JOIN read_models.members AS m ON m.tenant_id = t.tenant_id AND m.member_id = g.member_id
    WHERE t.token_hash = ${tokenHash} AND t.kind = 'access'
      AND t.revoked_at IS NULL AND g.revoked_at IS NULL AND t.expires_at > ${now}
      AND tn.status = 'active' AND m.status = 'active'
      AND (m.last_deactivated_at IS NULL OR m.last_deactivated_at < g.created_at)
  `);
  return row ?? undefined;
}

/** The member a sign-in code named, while tenant and member are active (checked on the read models). */
export async function memberMaySignIn(db: CommonQueryMethods, tenantId: string, memberId: string): Promise<boolean> {
  return db.exists(sql.type(z.object({ found: z.number() }))`
    SELECT 1 AS found
    FROM read_models.tenants AS tn
    JOIN read_models.members AS m ON m.tenant_id = tn.tenant_id
    WHERE tn.tenant_id = ${tenantId} AND m.tenant_id = ${tenantId} AND m.member_id = ${memberId}
      AND tn.status = 'active' AND m.status = 'active'
  `);
}

/**
 * Whether a grant may be refreshed: its tenant and member active, and the member not deactivated
 * since the grant was made (the condition an access token is checked against on every request, so
 * a refresh never yields a token that would be refused).
 */
export async function grantMayContinue(db: CommonQueryMethods, tenantId: string, grantId: string): Promise<boolean> {
  return db.exists(sql.type(z.object({ found: z.number() }))`
    SELECT 1 AS found
    FROM oauth_grants AS g
    JOIN read_models.tenants AS tn ON tn.tenant_id = g.tenant_id
    JOIN read_models.members AS m ON m.tenant_id = g.tenant_id AND m.member_id = g.member_id
    WHERE g.tenant_id = ${tenantId} AND g.grant_id = ${grantId} AND tn.tenant_id = ${tenantId} AND m.tenant_id = ${tenantId}
      AND tn.status = 'active' AND m.status = 'active'
      AND (m.last_deactivated_at IS NULL OR m.last_deactivated_at < g.created_at)
  `);
}

export type PurgeReport = { readonly signInCodes: number; readonly authorizationCodes: number; readonly tokens: number; readonly grants: number; readonly clients: number };

/**
 * Deletes, tenant by tenant, sign-in codes, authorization codes and tokens that expired before the
 * cutoff, then the grants left with none of them; then the registered clients no grant refers to
 * that were never used and registered before `clients.neverUsedBefore`, or last used before
 * `clients.unusedSince`.
 */
export async function purgeExpired(pool: DatabasePool, cutoff: string, clients: { neverUsedBefore: string; unusedSince: string }): Promise<PurgeReport> {
  const tenants = await pool.anyFirst(sql.type(z.object({ tenantId: z.string() }))`
    SELECT tenant_id AS "tenantId" FROM oauth_sign_in_codes UNION SELECT tenant_id FROM oauth_grants
  `);
  let signInCodes = 0;
  let authorizationCodes = 0;
  let tokens = 0;
  let grants = 0;
  for (const tenantId of tenants) {
    signInCodes += (await pool.query(sql.typeAlias('void')`DELETE FROM oauth_sign_in_codes WHERE tenant_id = ${tenantId} AND expires_at < ${cutoff}`)).rowCount;
    authorizationCodes += (await pool.query(sql.typeAlias('void')`DELETE FROM oauth_authorization_codes WHERE tenant_id = ${tenantId} AND expires_at < ${cutoff}`)).rowCount;
    tokens += (await pool.query(sql.typeAlias('void')`DELETE FROM oauth_tokens WHERE tenant_id = ${tenantId} AND expires_at < ${cutoff}`)).rowCount;
    grants += (
      await pool.query(sql.typeAlias('void')`
        DELETE FROM oauth_grants AS g
        WHERE g.tenant_id = ${tenantId} AND g.created_at < ${cutoff}
          AND NOT EXISTS (SELECT FROM oauth_tokens AS t WHERE t.tenant_id = ${tenantId} AND t.grant_id = g.grant_id)
          AND NOT EXISTS (SELECT FROM oauth_authorization_codes AS c WHERE c.tenant_id = ${tenantId} AND c.grant_id = g.grant_id)
      `)
    ).rowCount;
  }
  const deletedClients = (
    await pool.query(sql.typeAlias('void')`
      DELETE FROM oauth_clients AS c
      WHERE ((c.last_used_at IS NULL AND c.created_at < ${clients.neverUsedBefore}) OR c.last_used_at < ${clients.unusedSince})
        AND NOT EXISTS (SELECT FROM oauth_grants AS g WHERE g.client_id = c.client_id)
    `)
  ).rowCount;
  return { signInCodes, authorizationCodes, tokens, grants, clients: deletedClients };
}
