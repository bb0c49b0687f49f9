import type { DatabasePool } from 'slonik';
import type { Clock } from '../platform/clock.js';
import { commitToStandbys } from '../platform/db.js';
import { awaitLeasedStandbys } from '../platform/readLeases.js';
import { generateKey, hashKey, keyPrefix } from './keyFormat.js';
import { countActiveKeys, insertKey, listKeys, lockTenantKeys, markKeyRevoked, prefixTaken, type StoredKey } from './keyStore.js';
import { allScopes, isScope, issuableScopes, scopesNoKeyCanHold, type Scope } from './scopes.js';

export const maxActiveKeysPerTenant = 10;

export class KeyIssueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyIssueError';
  }
}

/**
 * Confirms, from the console's records, that the workspace is active and that the member is an
 * active member of it holding `integrations.manage`; throws an error saying why not.
 */
export type RequesterCheck = (workspaceId: string, memberId: string) => Promise<void>;

export type IssuedKey = { key: string; prefix: string; workspaceId: string; scopes: Scope[] };

/** Scopes as requested, checked and put in the specification's order. */
export function parseRequestedScopes(requested: readonly string[]): Scope[] {
  const trimmed = requested.map((scope) => scope.trim()).filter((scope) => scope !== '');
  if (trimmed.length === 0) {
    throw new KeyIssueError('a key needs at least one scope (--scopes a,b)');
  }
  for (const scope of trimmed) {
    if (!isScope(scope)) {
      throw new KeyIssueError(`unknown scope "${scope}"; a key can hold ${issuableScopes.join(', ')}`);
    }
    if (scopesNoKeyCanHold.includes(scope)) {
      throw new KeyIssueError(`no API key can hold the scope ${scope} (it exists for console members only); a key can hold ${issuableScopes.join(', ')}`);
    }
  }
  return allScopes.filter((scope) => trimmed.includes(scope));
}

export async function issueKey(
  deps: { pool: DatabasePool; clock: Clock; checkRequester: RequesterCheck },
  input: { workspaceId: string; memberId: string; scopes: readonly string[]; name?: string },
): Promise<IssuedKey> {
  const scopes = parseRequestedScopes(input.scopes);
  await deps.checkRequester(input.workspaceId, input.memberId);
  const issued = await deps.pool.transaction(async (transaction) => {
    // A new key is known to the standbys serving reads before it is handed out.
    await commitToStandbys(transaction);
    await lockTenantKeys(transaction, input.workspaceId);
    if ((await countActiveKeys(transaction, input.workspaceId)) >= maxActiveKeysPerTenant) {
      throw new KeyIssueError(
        `workspace ${input.workspaceId} already has ${maxActiveKeysPerTenant} active keys; revoke one first (supply-api keys revoke --prefix P)`,
      );
    }
    let key = generateKey();
    // The prefix identifies a key to operators, so it must be unique; with 62³ prefixes a clash is rare.
    while (await prefixTaken(transaction, keyPrefix(key))) {
      key = generateKey();
    }
    const prefix = keyPrefix(key);
    await insertKey(transaction, {
      tenantId: input.workspaceId,
      prefix,
      keyHash: hashKey(key),
      name: input.name ?? 'integration',
      memberId: input.memberId,
      scopes,
      createdAt: deps.clock.now().toISOString(),
    });
    return { key, prefix, workspaceId: input.workspaceId, scopes };
  });
  // Known to every standby some API process reads from under a lease before it is handed out.
  await awaitLeasedStandbys(deps.pool);
  return issued;
}

export async function revokeKey(deps: { pool: DatabasePool; clock: Clock }, prefix: string): Promise<StoredKey> {
  if (!/^svc_test_[0-9A-Za-z]{3}$/.test(prefix)) {
    throw new KeyIssueError(`--prefix must be the 12-character key prefix, such as svc_test_AbC (got "${prefix}")`);
  }
  const key = await markKeyRevoked(deps.pool, prefix, deps.clock.now().toISOString());
  if (!key) {
    throw new KeyIssueError(`no key has the prefix ${prefix}`);
  }
  return key;
}

export { listKeys };
