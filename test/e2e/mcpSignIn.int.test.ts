import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { randomUUID } from 'node:crypto';
import { newEvent, streams } from '../../src/events/index.js';
import { issuableScopes } from '../../src/keys/scopes.js';
import { v1Operations } from '../../src/api/v1/operations.js';
import { hashSecret } from '../../src/mcp/credentials.js';
import { purgeExpired } from '../../src/mcp/oauthStore.js';
import { sql } from '../../src/platform/sql.js';
import { runCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { startAssistant } from '../support/assistantServer.js';
import { testErrorTypeBase } from '../support/apiTestBed.js';
import { MemoryOAuthProvider, mcpTransport, newClient, signIn, submitSignInCode, testRedirectUrl } from '../support/mcpClient.js';
import type { Json } from '../support/mcpSuite.js';
import { problemShape, changedMembers, handledSecrets, bed, tenantA, tenantB, owner, codeFor, activeMemberWithout, callTool, problemOf, rawMcp, accessTokenOf, useMcpBed } from '../support/mcpSuite.js';

useMcpBed();

describe('the sign-in page', () => {
  async function startAuthorization(provider: MemoryOAuthProvider = new MemoryOAuthProvider()): Promise<{ url: URL; provider: MemoryOAuthProvider }> {
    await newClient()
      .connect(mcpTransport(bed.baseUrl, provider))
      .catch(() => undefined);
    if (provider.authorizationUrl === undefined) throw new Error('no authorization started');
    return { url: provider.authorizationUrl, provider };
  }

  test('names the client and the scopes, has one text field signInCode, loads nothing external', async () => {
    const { url } = await startAuthorization(new MemoryOAuthProvider({ client_name: 'Claude <Desktop>' }));
    const page = await fetch(url);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('Claude &lt;Desktop&gt;');
    for (const scope of issuableScopes) expect(html).toContain(scope);
    expect(html.match(/<input\b[^>]*>/g)).toEqual([expect.stringMatching(/type="text"[^>]*name="signInCode"/)]);
    expect(html).not.toMatch(/\b(src|href)=/);
  });

  test('a wrong code and a used code show the page again with an error and reveal no member', async () => {
    const memberId = owner(tenantA);
    const code = await codeFor(tenantA, memberId);
    const { url } = await startAuthorization();
    const wrong = await submitSignInCode(url, 'AAAA-BBBB-CCCC');
    expect(wrong.status).toBe(400);
    const wrongPage = await wrong.text();
    expect(wrongPage).toContain('name="signInCode"');
    expect(wrongPage).toMatch(/not valid|expired|already used/);
    expect(wrongPage).not.toContain(memberId);
    expect(wrongPage).not.toContain(tenantA.workspaceId);
    expect((await submitSignInCode(url, code.toLowerCase().replace(/-/g, ' '))).status).toBe(302);
    const { url: again } = await startAuthorization();
    const used = await submitSignInCode(again, code);
    expect(used.status).toBe(400);
    expect(await used.text()).toContain('name="signInCode"');
  });

  test('PKCE missing or plain is refused; a redirect URI must match exactly', async () => {
    const { url } = await startAuthorization();
    const plain = new URL(url);
    plain.searchParams.set('code_challenge_method', 'plain');
    const missing = new URL(url);
    missing.searchParams.delete('code_challenge');
    missing.searchParams.delete('code_challenge_method');
    for (const refused of [plain, missing]) {
      const response = await fetch(refused, { redirect: 'manual' });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(testRedirectUrl);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.has('code')).toBe(false);
      const posted = await submitSignInCode(refused, await codeFor(tenantA, owner(tenantA)));
      expect(new URL(posted.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');
    }
    const otherPort = new URL(url);
    otherPort.searchParams.set('redirect_uri', 'http://127.0.0.1:10/oauth/callback');
    const response = await fetch(otherPort, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  test('the console command prints a single-use code valid for 10 minutes', async () => {
    const result = await runCli(['console', 'sign-in-code', '--workspace', tenantA.workspaceId, '--member', owner(tenantA)], { DATABASE_URL: bed.database.url });
    expect(result.code, result.stderr).toBe(0);
    const printed = z.object({ signInCode: z.string(), expiresAt: z.string() }).strict().parse(JSON.parse(result.stdout));
    expect(printed.signInCode).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    const validFor = Date.parse(printed.expiresAt) - Date.now();
    expect(validFor).toBeGreaterThan(9 * 60_000);
    expect(validFor).toBeLessThanOrEqual(10 * 60_000);
    const { client } = await signIn(bed.baseUrl, async () => printed.signInCode);
    await client.close();
    const refused = await runCli(['console', 'sign-in-code', '--workspace', tenantA.workspaceId, '--member', 'nobody'], { DATABASE_URL: bed.database.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not a member');
  }, 60_000);
});

describe('tokens', () => {
  async function tokenRequest(form: Record<string, string>): Promise<{ status: number; body: Json }> {
    const response = await fetch(`${bed.baseUrl}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
    return { status: response.status, body: (await response.json()) as Json };
  }

  function clientIdOf(provider: MemoryOAuthProvider): string {
    const id = provider.clientInformation()?.client_id;
    if (id === undefined) throw new Error('not registered');
    return id;
  }

  test('refresh rotates: the new pair works, the used refresh token is refused and ends the grant', async () => {
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
    await client.close();
    const first = provider.tokens();
    if (first?.refresh_token === undefined) throw new Error('no refresh token');
    expect(first.expires_in).toBeLessThanOrEqual(3600);
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientIdOf(provider) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).not.toBe(first.access_token);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    const newAccess = String(refreshed.body.access_token);
    const ok = await rawMcp(newAccess, { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(ok.status).toBe(200);
    const replay = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientIdOf(provider) });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const afterReplay = await rawMcp(newAccess, { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(afterReplay.status).toBe(401);
  });

  test('an authorization code is single use and bound to its client and redirect URI', async () => {
    const provider = new MemoryOAuthProvider();
    await newClient()
      .connect(mcpTransport(bed.baseUrl, provider))
      .catch(() => undefined);
    const url = provider.authorizationUrl;
    if (url === undefined) throw new Error('no authorization');
    const answer = await submitSignInCode(url, await codeFor(tenantA, owner(tenantA)));
    const code = new URL(answer.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const other = new MemoryOAuthProvider({ client_name: 'Another Assistant' });
    await newClient()
      .connect(mcpTransport(bed.baseUrl, other))
      .catch(() => undefined);
    const base = { grant_type: 'authorization_code', code, code_verifier: provider.codeVerifier(), redirect_uri: testRedirectUrl };
    expect(await tokenRequest({ ...base, client_id: clientIdOf(other) })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await tokenRequest({ ...base, client_id: clientIdOf(provider), code_verifier: 'x'.repeat(50) })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await tokenRequest({ ...base, client_id: clientIdOf(provider), redirect_uri: 'http://127.0.0.1:9/other' })).toMatchObject({ status: 400 });
    const exchanged = await tokenRequest({ ...base, client_id: clientIdOf(provider) });
    expect(exchanged.status).toBe(200);
    const again = await tokenRequest({ ...base, client_id: clientIdOf(provider) });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // A replayed code ends what it granted.
    const response = await rawMcp(String(exchanged.body.access_token), { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(response.status).toBe(401);
  });

  test('a revoked token and an expired one answer 401; secrets, codes and tokens are stored only as hashes', async () => {
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
    await client.close();
    const tokens = provider.tokens();
    if (tokens?.refresh_token === undefined) throw new Error('no tokens');
    const stored = await bed.database.pool.any(sql.type(z.object({ tokenHash: z.string() }))`SELECT token_hash AS "tokenHash" FROM oauth_tokens`);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.some((row) => row.tokenHash === tokens.access_token || row.tokenHash === tokens.refresh_token)).toBe(false);
    expect(stored.every((row) => /^[0-9a-f]{64}$/.test(row.tokenHash))).toBe(true);

    const revoke = await fetch(`${bed.baseUrl}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.access_token, client_id: clientIdOf(provider) }).toString(),
    });
    expect(revoke.status).toBe(200);
    const revoked = await rawMcp(tokens.access_token, { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('www-authenticate')).toContain('resource_metadata=');

    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientIdOf(provider) });
    expect(refreshed.status).toBe(200);
    const access = String(refreshed.body.access_token);
    await bed.database.pool.query(sql.typeAlias('void')`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'access'`);
    const expired = await rawMcp(access, { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(expired.status).toBe(401);
    const foreign = await rawMcp('dsa_at_' + 'A'.repeat(43), { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(foreign.status).toBe(401);
  });

  test('a confidential client authenticates with its secret, which is stored hashed', async () => {
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)), {
      provider: new MemoryOAuthProvider({ token_endpoint_auth_method: 'client_secret_post' }),
    });
    await client.close();
    const information = provider.clientInformation();
    const secret = information?.client_secret;
    if (secret === undefined) throw new Error('a confidential client gets a secret');
    const row = await bed.database.pool.one(sql.type(z.object({ hash: z.string().nullable() }))`
      SELECT client_secret_hash AS hash FROM oauth_clients WHERE client_id = ${clientIdOf(provider)}
    `);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.hash).not.toBe(secret);
    const refreshToken = provider.tokens()?.refresh_token ?? '';
    expect(await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientIdOf(provider), client_secret: 'wrong' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_client' },
    });
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientIdOf(provider), client_secret: secret })).status).toBe(200);
  });
});

describe('retention', () => {
  test('codes and tokens expired more than the cutoff ago are deleted with their grant; live ones stay', async () => {
    const old = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
    await old.client.close();
    const live = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
    const oldAccess = hashSecret(accessTokenOf(old.provider));
    const grantId = await bed.database.pool.oneFirst(sql.type(z.object({ grantId: z.string() }))`
      SELECT grant_id AS "grantId" FROM oauth_tokens WHERE token_hash = ${oldAccess}
    `);
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await bed.database.pool.query(sql.typeAlias('void')`UPDATE oauth_tokens SET expires_at = ${twoDaysAgo} WHERE grant_id = ${grantId}`);
    await bed.database.pool.query(sql.typeAlias('void')`UPDATE oauth_authorization_codes SET expires_at = ${twoDaysAgo} WHERE grant_id = ${grantId}`);
    await bed.database.pool.query(sql.typeAlias('void')`UPDATE oauth_grants SET created_at = ${twoDaysAgo} WHERE grant_id = ${grantId}`);
    const report = await purgeExpired(bed.database.pool, new Date(Date.now() - 86_400_000).toISOString(), { neverUsedBefore: twoDaysAgo, unusedSince: twoDaysAgo });
    expect(report.tokens).toBeGreaterThanOrEqual(2);
    expect(report.grants).toBeGreaterThanOrEqual(1);
    const left = await bed.database.pool.anyFirst(sql.type(z.object({ grantId: z.string() }))`SELECT grant_id AS "grantId" FROM oauth_grants WHERE grant_id = ${grantId}`);
    expect(left).toEqual([]);
    expect((await callTool(live.client, 'listClinics')).isError).toBeFalsy();
    await live.client.close();
  });
});

describe('member and tenant changes act on the very next request', () => {
  test('a suspended member’s token answers 401 on the next call, and stays refused after reactivation', async () => {
    const memberId = activeMemberWithout(tenantA, ['integrations.manage']);
    changedMembers.push(memberId);
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, memberId));
    expect((await callTool(client, 'listClinics')).isError).toBeFalsy();
    await bed.console.suspendMember({ workspaceId: tenantA.workspaceId, memberId });
    await bed.settle();
    const token = accessTokenOf(provider);
    const refused = await rawMcp(token, { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listClinics', arguments: {} } } });
    expect(refused.status).toBe(401);
    await expect(codeFor(tenantA, memberId)).rejects.toThrow(/suspended/);
    await bed.console.reactivateMember({ workspaceId: tenantA.workspaceId, memberId });
    await bed.settle();
    const still = await rawMcp(token, { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(still.status).toBe(401);
    await client.close().catch(() => undefined);
  });

  test('a removed member’s token answers 401 on the next call', async () => {
    const memberId = activeMemberWithout(tenantA, ['integrations.manage']);
    changedMembers.push(memberId);
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, memberId));
    expect((await callTool(client, 'listClinics')).isError).toBeFalsy();
    await bed.eventStore.append(
      streams.member(tenantA.workspaceId, memberId),
      [newEvent('MemberRemoved', { memberId }, { eventId: randomUUID(), tenantId: tenantA.workspaceId, occurredAt: new Date().toISOString() })],
      'any',
    );
    // Appended beside the bed's console, so settling alone may not wait for it: wait for the projection.
    await bed.settle();
    await eventually(async () => {
      const status = await bed.database.pool.oneFirst(sql.type(z.object({ status: z.string() }))`
        SELECT status FROM read_models.members WHERE tenant_id = ${tenantA.workspaceId} AND member_id = ${memberId}
      `);
      expect(status, 'the removal projected').toBe('removed');
    });
    const refused = await rawMcp(accessTokenOf(provider), { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(refused.status).toBe(401);
    await client.close().catch(() => undefined);
  });

  test('a suspended tenant’s tokens answer 401', async () => {
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantB, owner(tenantB)));
    expect((await callTool(client, 'getOrder', { orderId: tenantB.orderIds[0] })).isError).toBeFalsy();
    expect((await problemOf(client, 'getOrder', { orderId: tenantA.orderIds[0] })).code).toBe('orders.not_found');
    await bed.console.suspendTenant({ workspaceId: tenantB.workspaceId });
    await bed.settle();
    const refused = await rawMcp(accessTokenOf(provider), { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(refused.status).toBe(401);
    await client.close().catch(() => undefined);
  });
});

describe('the endpoint on its own parts', () => {
  async function post(url: string, token: string, body: Json): Promise<Response> {
    return fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(body),
    });
  }

  test('a transport failure answers 500 with JSON-RPC code -32603', async () => {
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
    await client.close();
    const assistant = await startAssistant(bed, { failingTransport: true });
    try {
      const response = await post(assistant.url, accessTokenOf(provider), { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    } finally {
      await assistant.close();
    }
  });

  test('an unexpected failure inside a tool is a common.internal_error problem document, logged with the request id, with nothing internal in it', async () => {
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
    await client.close();
    const failing = v1Operations.map((operation) =>
      operation.operationId === 'getOrder' ? { ...operation, handle: () => Promise.reject(new Error('read table vanished: secret detail')) } : operation,
    );
    const assistant = await startAssistant(bed, { operations: failing });
    try {
      const response = await post(assistant.url, accessTokenOf(provider), {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'getOrder', arguments: { orderId: tenantA.orderIds[0] } },
      });
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id');
      const answer = (await response.json()) as { result: { isError: boolean; content: { text: string }[] } };
      expect(answer.result.isError).toBe(true);
      const text = answer.result.content[0]?.text ?? '';
      expect(text).not.toContain('secret detail');
      expect(problemShape.parse(JSON.parse(text))).toEqual({
        type: `${testErrorTypeBase}/common.internal_error`,
        title: 'Internal error',
        status: 500,
        detail: 'An unexpected error occurred. Quote the requestId when contacting support.',
        instance: '/mcp#getOrder',
        code: 'common.internal_error',
        requestId,
      });
      expect(assistant.logs.some((line) => line.includes('tool call failed') && line.includes(String(requestId)) && line.includes('secret detail'))).toBe(true);
    } finally {
      await assistant.close();
    }
  });

  test('one request budget per sign-in: tool calls spend it, refreshed tokens share it, then common.too_many_requests', async () => {
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
    await client.close();
    const assistant = await startAssistant(bed);
    try {
      const call = (token: string) => post(assistant.url, token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listClinics', arguments: {} } });
      const results = async (response: Response) => (await response.json()) as { result: { isError?: boolean; content: { text: string }[] } };
      const first = await results(await call(accessTokenOf(provider)));
      expect(first.result.isError).toBeUndefined();
      const refreshToken = provider.tokens()?.refresh_token ?? '';
      const refreshed = await fetch(`${bed.baseUrl}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: provider.clientInformation()?.client_id ?? '' }).toString(),
      });
      const newAccess = String(((await refreshed.json()) as Json).access_token);
      expect((await results(await call(newAccess))).result.isError).toBeUndefined();
      const third = await results(await call(newAccess));
      expect(third.result.isError).toBe(true);
      expect(JSON.parse(third.result.content[0]?.text ?? '')).toMatchObject({ code: 'common.too_many_requests', status: 429, instance: '/mcp#listClinics' });
      // Another sign-in has its own budget.
      const other = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
      await other.client.close();
      expect((await results(await call(accessTokenOf(other.provider)))).result.isError).toBeUndefined();
    } finally {
      await assistant.close();
    }
  });
});

describe('logs', () => {
  test('the access log names the tenant and the grant of /mcp requests, and never a sign-in code or token', () => {
    const lines = bed.logs.map((line) => JSON.parse(line) as Json);
    const mcpLines = lines.filter((line) => line.url === '/mcp' && line.status === 200);
    expect(mcpLines.length).toBeGreaterThan(0);
    expect(mcpLines.every((line) => typeof line.tenantId === 'string' && String(line.keyPrefix).startsWith('mcp:'))).toBe(true);
    expect(handledSecrets.length).toBeGreaterThan(10);
    const text = bed.logs.join('\n');
    for (const secret of handledSecrets) expect(text).not.toContain(secret);
  });
});
