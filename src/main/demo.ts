import { checkKeyRequester } from '../console/keyRequester.js';
import { checkSignInMember } from '../console/signInMember.js';
import { issueSignInCode } from '../mcp/signInCodes.js';
import { generateHistory } from '../console/history/generateHistory.js';
import { startOfUtcDay } from '../console/history/historyParams.js';
import { seed } from '../console/seed.js';
import { createSummaryCollector } from '../console/seedSummary.js';
import { streams } from '../events/index.js';
import { issueKey, listKeys, revokeKey } from '../keys/keyIssuer.js';
import { issuableScopes } from '../keys/scopes.js';
import type { Services } from './services.js';

export const demoKeyName = 'demo';
const demoParams = { seed: 1, tenants: 2, days: 90, scale: 'small' } as const;

/**
 * `serve --demo`: seeds the demo organisations into an empty store, then issues a fresh demo key
 * for the first one (revoking the previous demo key, and saying so, so that restarts never pile
 * keys up) and prints it on stderr, with a sign-in code for the assistant endpoint (printed once listening).
 */
export async function prepareDemo(services: Services): Promise<DemoSession> {
  const { eventStore, clock, logger, database } = services;
  const params = { ...demoParams, asOf: startOfUtcDay(clock.now()) };
  // Ids are a function of the seed alone, so the summary tells which workspace the demo owns
  // whether or not an earlier start already wrote it.
  const collector = createSummaryCollector(undefined);
  for (const write of generateHistory(params)) collector.observe(write);
  const first = collector.summary().tenants[0];
  const ownerId = first?.memberIds[0];
  if (!first || ownerId === undefined) throw new Error('the demo history has no workspace');
  const workspaceId = first.workspaceId;

  if ((await eventStore.readStream(streams.workspace(workspaceId))).length === 0) {
    const summary = await seed({ eventStore, params });
    logger.info({ workspaces: summary.tenants.map((tenant) => tenant.workspaceId) }, 'demo history seeded');
  }
  // One demo key at a time: the previous start's cannot be shown again (only its hash is kept),
  // and keeping each would fill the workspace's ten active keys after a few restarts.
  const revoked: string[] = [];
  for (const key of await listKeys(database.pool, workspaceId)) {
    if (key.name === demoKeyName && key.status === 'active') {
      await revokeKey({ pool: database.pool, clock }, key.prefix);
      revoked.push(key.prefix);
    }
  }
  if (revoked.length > 0) logger.info({ workspaceId, revokedPrefixes: revoked }, 'demo key of the previous start revoked');
  const issued = await issueKey(
    { pool: database.pool, clock, checkRequester: (w, m) => checkKeyRequester(eventStore, w, m) },
    { workspaceId, memberId: ownerId, scopes: issuableScopes, name: demoKeyName },
  );
  const signIn = await issueSignInCode(
    { pool: database.pool, clock, checkMember: (w, m) => checkSignInMember(eventStore, w, m) },
    { workspaceId, memberId: ownerId },
  );
  const previous =
    revoked.length === 0
      ? ''
      : `  The demo key of the previous start (${revoked.map((prefix) => `${prefix}…`).join(', ')}) is revoked: it now answers 401. Use this one.\n`;
  process.stderr.write(
    `\n  Demo workspace ${workspaceId}\n  Demo API key (shown once): ${issued.key}\n  Scopes: ${issued.scopes.join(', ')}\n${previous}\n`,
  );
  return { key: issued.key, workspaceId, memberId: ownerId, ...signIn };
}

export type DemoSession = { key: string; workspaceId: string; memberId: string; signInCode: string; expiresAt: string };

/** Printed once the server listens, so that the address names the port actually bound. */
export function printAssistantSignIn(demo: DemoSession, baseUrl: string): void {
  process.stderr.write(
    [
      `  Assistant endpoint (MCP, OAuth sign-in): ${baseUrl}/mcp`,
      '  Connect an assistant (e.g. npx @modelcontextprotocol/inspector) to it; on the sign-in page enter',
      `  the sign-in code ${demo.signInCode} (member ${demo.memberId}, single use, valid until ${demo.expiresAt}).`,
      `  A new code: npx supply-api console sign-in-code --workspace ${demo.workspaceId} --member ${demo.memberId}`,
      '',
      '',
    ].join('\n'),
  );
}
