import type { DatabasePool } from 'slonik';
import { isoUtc, type Clock } from '../platform/clock.js';
import { generateSignInCode, hashSecret, normalizeSignInCode } from './credentials.js';
import { insertSignInCode } from './oauthStore.js';

export const signInCodeSeconds = 10 * 60;

/** Confirms, from the console's records, that the member may sign in; throws saying why not. */
export type SignInCheck = (workspaceId: string, memberId: string) => Promise<void>;

/**
 * What the console hands a member who wants to connect an assistant: a code to type on the
 * `/authorize` page, single use, valid for 10 minutes. Only its hash is stored.
 */
export async function issueSignInCode(
  deps: { pool: DatabasePool; clock: Clock; checkMember: SignInCheck },
  input: { workspaceId: string; memberId: string },
): Promise<{ signInCode: string; expiresAt: string }> {
  await deps.checkMember(input.workspaceId, input.memberId);
  const signInCode = generateSignInCode();
  const stored = normalizeSignInCode(signInCode);
  if (stored === undefined) throw new Error('a generated sign-in code must be readable');
  const now = deps.clock.now();
  const expiresAt = isoUtc(now.getTime() + signInCodeSeconds * 1000);
  await insertSignInCode(deps.pool, { tenantId: input.workspaceId, memberId: input.memberId, codeHash: hashSecret(stored), createdAt: isoUtc(now), expiresAt });
  return { signInCode, expiresAt };
}
