import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createLimits } from '../../src/api/rateLimit/requestBudget.js';
import { loadConfig } from '../../src/config/config.js';
import { generateToken } from '../../src/mcp/credentials.js';
import { purgeCutoffs } from '../../src/mcp/oauthMaintenance.js';
import { purgeExpired } from '../../src/mcp/oauthStore.js';
import { sql } from '../../src/platform/sql.js';
import { createRawClient } from '../api/rawHttp.js';
import { startAssistant, type AssistantServer } from '../support/assistantServer.js';
import { silentLogger as silent } from '../support/databases.js';
import { MemoryOAuthProvider, signIn, submitSignInCode, testRedirectUrl } from '../support/mcpClient.js';
import type { Json } from '../support/mcpSuite.js';
import { accessTokenOf, activeMemberWithout, bed, changedMembers, codeFor, expectNoSecretInLogs, owner, rawMcp, tenantA, useMcpBed } from '../support/mcpSuite.js';
import { services, testRedisUrl } from '../support/services.js';

/**
 * The assistant endpoint tried as an attacker would: each test is one way in that is now closed,
 * with the request that used to get through.
 */
useMcpBed();
afterAll(expectNoSecretInLogs);

/** Registrations of this file go to a server of their own, whose per-address limit they do not exhaust. */
let registrar: AssistantServer;
beforeAll(async () => {
  registrar = await startAssistant(bed, { addressLimits: { register: { points: 1000, windowSeconds: 3600 } } });
});
afterAll(async () => {
  await registrar?.close();
});

async function register(metadata: Json, origin = registrar.origin, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${origin}/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(metadata) });
  return { status: response.status, body: (await response.json()) as Json };
}

async function publicClient(redirectUri = testRedirectUrl, name = 'Attack Test Client'): Promise<string> {
  const registered = await register({ client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return String(registered.body.client_id);
}

const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');

function authorizeUrl(clientId: string, query: Record<string, string> = {}): URL {
  const url = new URL('/authorize', bed.baseUrl);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: testRedirectUrl, code_challenge: challenge, code_challenge_method: 'S256', state: 'st-1', ...query })) {
    url.searchParams.set(name, value);
  }
  return url;
}

async function tokenOfOwner(): Promise<{ access: string; clientId: string; refresh: string }> {
  const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
  await client.close();
  const access = accessTokenOf(provider);
  return { access, clientId: provider.clientInformation()?.client_id ?? '', refresh: provider.tokens()?.refresh_token ?? '' };
}

function post(url: string, token: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-06-18', ...headers },
    body: JSON.stringify(body),
  });
}

const junk = (count: number) => Array.from({ length: count }, (_, i) => `j${i}=1`).join('&');

describe('1. work per request is bounded and counted', () => {
  test('a batch is refused from protocol 2025-06-18 on; before it, each of its messages spends the sign-in budget, as every message does', async () => {
    const { access } = await tokenOfOwner();
    const assistant = await startAssistant(bed, { budgetPoints: 3 });
    try {
      const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
      const refused = await post(assistant.url, access, Array.from({ length: 100 }, (_, i) => list(i)));
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      const batch = await post(assistant.url, access, [list(1), list(2)], { 'mcp-protocol-version': '2025-03-26' });
      expect(batch.status).toBe(200);
      expect(((await batch.json()) as unknown[]).length).toBe(2);
      expect((await post(assistant.url, access, list(3))).status).toBe(200);
      const spent = await post(assistant.url, access, { jsonrpc: '2.0', id: 4, method: 'ping' });
      expect(spent.status).toBe(429);
      expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await spent.json()).toMatchObject({ id: 4, error: { code: -32000, data: { code: 'common.too_many_requests', status: 429, instance: '/mcp' } } });
    } finally {
      await assistant.close();
    }
  });

  test('with the production budget of 120 a minute, three batches of 100 messages do not all pass: the first spends 100 units, the others are 429 and counted', async () => {
    const { access } = await tokenOfOwner();
    const assistant = await startAssistant(bed, { budgetPoints: 120 });
    try {
      const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
      const statuses: number[] = [];
      for (let round = 0; round < 3; round += 1) {
        const answer = await post(assistant.url, access, batch, { 'mcp-protocol-version': '2025-03-26' });
        statuses.push(answer.status);
        await answer.arrayBuffer();
      }
      expect(statuses).toEqual([200, 429, 429]);
      expect(await assistant.metrics.getSingleMetricAsString('supply_request_budget_exhausted_total')).toMatch(/^supply_request_budget_exhausted_total 2$/m);
    } finally {
      await assistant.close();
    }
  });

  test('a 429 of /mcp speaks of the sign-in in its message and in its problem document alike', async () => {
    const { access } = await tokenOfOwner();
    const assistant = await startAssistant(bed, { budgetPoints: 1 });
    try {
      const ping = (id: number) => post(assistant.url, access, { jsonrpc: '2.0', id, method: 'ping' });
      expect((await ping(1)).status).toBe(200);
      const refused = await ping(2);
      expect(refused.status).toBe(429);
      const body = (await refused.json()) as { error: { message: string; data: { detail: string } } };
      expect(body.error.message).toContain('this sign-in');
      expect(body.error.data.detail).toContain('this sign-in');
      expect(body.error.data.detail).not.toMatch(/API key/i);
    } finally {
      await assistant.close();
    }
  });
});

describe('2. credentials never reach the access log', () => {
  test('sign-in codes, codes, secrets, verifiers, refresh tokens and keys in query strings are redacted; POST /authorize reads the sign-in code from the form only', async () => {
    const secrets = ['K2H4-Q7RS-SECRET', 'dsa_ac_SECRETA', 'SECRETB', 'SECRETC', 'dsa_rt_SECRETD', 'svc_test_SECRETE'];
    await fetch(`${bed.baseUrl}/authorize?client_id=x&signInCode=${secrets[0]}`);
    await fetch(`${bed.baseUrl}/token?code=${secrets[1]}&client_secret=${secrets[2]}&code_verifier=${secrets[3]}`, { method: 'POST' });
    await fetch(`${bed.baseUrl}/mcp?refresh_token=${secrets[4]}`, { method: 'POST' });
    await fetch(`${bed.baseUrl}/v1/me?Authorization=Bearer%20${secrets[5]}`);
    const text = bed.logs.join('\n');
    for (const secret of secrets) expect(text).not.toContain(secret.replace(/^.*_/, ''));

    const clientId = await publicClient();
    const url = authorizeUrl(clientId, { signInCode: await codeFor(tenantA, owner(tenantA)) });
    const answer = await submitSignInCode(url, 'AAAA-BBBB-CCCC');
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
  });
});

describe('3 and 4. registration', () => {
  test('redirect URIs must be https or loopback http, without fragment; the sign-in page shows the host the code goes to', async () => {
    for (const uri of ['http://evil.example/cb', 'http://localhost:3999/cb#frag', 'file:///etc/passwd']) {
      const refused = await register({ client_name: 'Claude Desktop', redirect_uris: [uri] });
      expect(refused, uri).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } });
    }
    const accepted = await register({ client_name: 'Claude Desktop', redirect_uris: ['https://claude.ai/api/mcp/auth_callback'], token_endpoint_auth_method: 'none' });
    expect(accepted.status).toBe(201);
    // Offered several, only the acceptable ones are registered (and said so); a refused one receives nothing.
    const mixed = await register({ client_name: 'Cursor', redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'http://evil.example/cb', 'http://localhost:8787/callback'], token_endpoint_auth_method: 'none' });
    expect(mixed).toMatchObject({ status: 201, body: { redirect_uris: ['http://localhost:8787/callback'] } });
    const foreign = await fetch(authorizeUrl(String(mixed.body.client_id), { redirect_uri: 'http://evil.example/cb' }), { redirect: 'manual' });
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get('location')).toBeNull();
    const url = authorizeUrl(String(accepted.body.client_id), { redirect_uri: 'https://claude.ai/api/mcp/auth_callback' });
    const page = await (await fetch(url)).text();
    expect(page).toContain('sent back to <strong>claude.ai</strong>');
  });

  test('fields are bounded: a 95 KB name and 3 000 redirect URIs are refused (413: the bodies are over every limit), and so are 101 characters of name or 11 URIs', async () => {
    expect(await register({ client_name: 'x'.repeat(95_000), redirect_uris: [testRedirectUrl] })).toMatchObject({ status: 413, body: { code: 'common.payload_too_large' } });
    expect(await register({ client_name: 'x'.repeat(101), redirect_uris: [testRedirectUrl] })).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
    const many = Array.from({ length: 3000 }, (_, i) => `http://127.0.0.1:${1000 + i}/cb`);
    expect(await register({ client_name: 'Many', redirect_uris: many })).toMatchObject({ status: 413 });
    expect(await register({ client_name: 'Many', redirect_uris: many.slice(0, 11) })).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } });
  });

  test('a URL field that is not a web address is refused with one human sentence naming the field, never a schema dump', async () => {
    for (const [field, value] of [
      ['logo_uri', 'javascript:x'],
      ['client_uri', 'data:text/html,<script>alert(1)</script>'],
      ['tos_uri', 'vbscript:msgbox'],
      ['policy_uri', 'javascript:alert(1)'],
      ['jwks_uri', 'not a url'],
      ['logo_uri', 'file:///etc/passwd'],
      // A field only the SDK's own schema checks.
      ['software_statement', 5],
    ] as const) {
      const refused = await register({ client_name: 'Logo', redirect_uris: [testRedirectUrl], token_endpoint_auth_method: 'none', [field]: value });
      expect(refused, `${field}: ${value}`).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
      const description = String(refused.body.error_description);
      expect(description, description).toMatch(new RegExp(`^${field} `));
      expect(description).not.toMatch(/[\n{}[\]]/);
      expect(description.length).toBeLessThan(200);
    }
    const accepted = await register({ client_name: 'Logo', redirect_uris: [testRedirectUrl], token_endpoint_auth_method: 'none', logo_uri: 'https://example.com/logo.png', policy_uri: 'https://example.com/policy' });
    expect(accepted.status).toBe(201);
  });

  test('the hourly purge deletes clients never used after a day and clients unused for 90 days; clients in use stay', async () => {
    const unused = await publicClient();
    const { clientId: used } = await tokenOfOwner();
    const stale = await publicClient();
    const long = new Date(Date.now() - 100 * 86_400_000).toISOString();
    await bed.database.pool.query(sql.typeAlias('void')`UPDATE oauth_clients SET created_at = ${long} WHERE client_id IN (${unused}, ${used}, ${stale})`);
    await bed.database.pool.query(sql.typeAlias('void')`UPDATE oauth_clients SET last_used_at = ${long} WHERE client_id IN (${used}, ${stale})`);
    const { cutoff, clients } = purgeCutoffs(new Date());
    const report = await purgeExpired(bed.database.pool, cutoff, clients);
    expect(report.clients).toBeGreaterThanOrEqual(2);
    const left = await bed.database.pool.anyFirst(sql.type(z.object({ clientId: z.string() }))`
      SELECT client_id AS "clientId" FROM oauth_clients WHERE client_id IN (${unused}, ${used}, ${stale})
    `);
    // `used` still has a grant (its tokens live): it stays, however long ago it was last used.
    expect(left).toEqual([used]);
    const gone = await fetch(authorizeUrl(unused), { redirect: 'manual' });
    expect(gone.status).toBe(400);
    expect(await gone.json()).toMatchObject({ error: 'invalid_client' });
  });

  describe.runIf(services.redis)('with Redis', () => {
    test('per-address limits hold across processes', async () => {
      const prefix = `supply-api:test:assistant:${randomBytes(6).toString('hex')}`;
      const [first, second] = await Promise.all([createLimits({ redisUrl: testRedisUrl, logger: silent }), createLimits({ redisUrl: testRedisUrl, logger: silent })]);
      const one = await startAssistant(bed, { limits: first, limitKeyPrefix: prefix, addressLimits: { register: { points: 2, windowSeconds: 60 } } });
      const two = await startAssistant(bed, { limits: second, limitKeyPrefix: prefix, addressLimits: { register: { points: 2, windowSeconds: 60 } } });
      const admin = new Redis(testRedisUrl);
      try {
        const metadata = { client_name: 'Limited', redirect_uris: [testRedirectUrl], token_endpoint_auth_method: 'none' };
        expect((await register(metadata, one.origin)).status).toBe(201);
        expect((await register(metadata, two.origin)).status).toBe(201);
        const third = await register(metadata, one.origin);
        expect(third).toMatchObject({ status: 429, body: { error: 'too_many_requests' } });
      } finally {
        await Promise.all([one.close(), two.close()]);
        await Promise.all([first.close(), second.close()]);
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length > 0) await admin.del(...keys);
        admin.disconnect();
      }
    });
  });
});

describe('5. the authorization request', () => {
  test('a redirect URI other than the registered one is refused without a redirect, whatever else is wrong', async () => {
    const clientId = await publicClient();
    for (const query of [
      { redirect_uri: 'http://127.0.0.1:6666/oauth/callback', code_challenge_method: 'plain' } as Record<string, string>,
      { redirect_uri: 'http://127.0.0.1:6666/oauth/callback', code_challenge: '' },
      { client_id: 'no-such-client', code_challenge_method: 'plain' },
    ]) {
      const response = await fetch(authorizeUrl(clientId, query), { redirect: 'manual' });
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    }
  });

  test('other errors redirect to the registered URI with state and a sentence', async () => {
    const clientId = await publicClient();
    for (const [query, error] of [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'short' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: 'orders:write' }, 'invalid_scope'],
    ] as const) {
      const response = await fetch(authorizeUrl(clientId, query), { redirect: 'manual' });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(testRedirectUrl);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('state')).toBe('st-1');
      expect(location.searchParams.get('error_description')).toMatch(/^[A-Za-z][^{}[\]]+$/);
    }
  });
});

describe('6. a suspension ends the grant', () => {
  test('a refresh after suspension and reactivation is invalid_grant', async () => {
    const memberId = activeMemberWithout(tenantA, ['integrations.manage', 'orders.approve']);
    changedMembers.push(memberId);
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, memberId));
    await client.close();
    accessTokenOf(provider);
    await bed.console.suspendMember({ workspaceId: tenantA.workspaceId, memberId });
    await bed.console.reactivateMember({ workspaceId: tenantA.workspaceId, memberId });
    await bed.settle();
    const response = await fetch(`${bed.baseUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: provider.tokens()?.refresh_token ?? '', client_id: provider.clientInformation()?.client_id ?? '' }).toString(),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('7. query strings of more than 1000 parameters', () => {
  test('are refused on /v1, /mcp and the OAuth endpoints instead of losing the parameters past the 1000th', async () => {
    const key = await bed.issueKey(tenantA, ['orders:read']);
    // Plain fetch: the OpenAPI check of the bed's request() takes seconds on a thousand parameters.
    const orders = (count: number) => fetch(`${bed.baseUrl}/v1/orders?${junk(count)}&limit=1`, { headers: { authorization: `Bearer ${key}` } });
    const refused = await orders(1000);
    expect(refused.status).toBe(400);
    // A 400 of the parameter stage: after the key and the budget, with the rate-limit headers.
    expect(refused.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(await refused.json()).toMatchObject({ code: 'common.invalid_request', status: 400, instance: '/v1/orders', detail: expect.stringContaining('1000') });
    const kept = await orders(999);
    expect(kept.status).toBe(200);
    expect(((await kept.json()) as { data: unknown[] }).data).toHaveLength(1);
    const { access } = await tokenOfOwner();
    const mcp = await post(`${bed.baseUrl}/mcp?${junk(1001)}`, access, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(mcp.status).toBe(400);
    const metadata = await fetch(`${bed.baseUrl}/.well-known/oauth-authorization-server?${junk(1001)}`);
    expect(metadata.status).toBe(400);
    expect((await fetch(`${bed.baseUrl}/.well-known/oauth-authorization-server?${junk(999)}`)).status).toBe(200);
  });
});

describe('8 and 9. requests a browser or a guesser sends', () => {
  test('a present Origin other than the server’s is 403; a Host that is not loopback, on a loopback server, too', async () => {
    const { access } = await tokenOfOwner();
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const evil = await post(`${bed.baseUrl}/mcp`, access, list, { origin: 'http://evil.example.com' });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ error: { code: -32000 } });
    expect((await post(`${bed.baseUrl}/mcp`, access, list, { origin: bed.baseUrl })).status).toBe(200);
    const raw = createRawClient(bed.baseUrl);
    try {
      const rebound = await raw.send({
        method: 'POST',
        path: '/mcp',
        headers: { host: 'evil.example.com', 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${access}` },
        body: Buffer.from(JSON.stringify(list)),
      });
      expect(rebound.status).toBe(403);
    } finally {
      raw.close();
    }
  });

  test('a random bearer token is refused before any database lookup, and an address sending many is refused for a while', async () => {
    let statements = 0;
    const counting = new Proxy(bed.database.pool, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          statements += 1;
          return (value as (...inner: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as DatabasePool;
    const { access } = await tokenOfOwner();
    const assistant = await startAssistant(bed, { db: counting, addressLimits: { failedBearer: { points: 3, windowSeconds: 60 } } });
    try {
      const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
      for (const token of [`dsa_at_${randomBytes(32).toString('base64url')}`, `${generateToken('access').slice(0, -4)}AAAA`, 'svc_test_abcdefghijklmnopqrstuvwx_abcd']) {
        expect((await post(assistant.url, token, list)).status).toBe(401);
      }
      expect(statements).toBe(0);
      const blocked = await post(assistant.url, generateToken('access'), list);
      expect(blocked.status).toBe(401);
      const after = await post(assistant.url, access, list);
      expect(after.status).toBe(429);
      expect(Number(after.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await assistant.close();
    }
  });

  test('behind a trusted proxy the limits key on the address it names; untrusted, X-Forwarded-For changes nothing', async () => {
    const limit = { register: { points: 1, windowSeconds: 60 } };
    const trusted = await startAssistant(bed, { trustProxy: loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy, addressLimits: limit });
    const untrusted = await startAssistant(bed, { addressLimits: limit });
    try {
      const metadata = { client_name: 'Proxied', redirect_uris: [testRedirectUrl], token_endpoint_auth_method: 'none' };
      expect((await register(metadata, trusted.origin, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(201);
      expect((await register(metadata, trusted.origin, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(201);
      expect((await register(metadata, trusted.origin, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(429);
      expect((await register(metadata, untrusted.origin, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(201);
      expect((await register(metadata, untrusted.origin, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(429);
    } finally {
      await Promise.all([trusted.close(), untrusted.close()]);
    }
  });
});

describe('the token and revocation endpoints, and the JSON-RPC layer', () => {
  test('client_secret_basic works and is advertised for /token and /revoke; a failed client authentication is invalid_client', async () => {
    const metadata = (await (await fetch(`${bed.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Json;
    for (const field of ['token_endpoint_auth_methods_supported', 'revocation_endpoint_auth_methods_supported']) {
      expect(metadata[field], field).toEqual(['none', 'client_secret_post', 'client_secret_basic']);
    }
    const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)), { provider: new MemoryOAuthProvider({ token_endpoint_auth_method: 'client_secret_basic' }) });
    await client.close();
    const clientId = provider.clientInformation()?.client_id ?? '';
    const secret = provider.clientInformation()?.client_secret ?? '';
    const refresh = (authorization?: string, form: Record<string, string> = {}) =>
      fetch(`${bed.baseUrl}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization === undefined ? {} : { authorization }) },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: provider.tokens()?.refresh_token ?? '', ...form }).toString(),
      });
    const basic = (id: string, password: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(password)}`).toString('base64')}`;
    const wrong = await refresh(basic(clientId, 'wrong'));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_client' });
    const anonymous = await refresh();
    expect(anonymous.status).toBe(400);
    expect(await anonymous.json()).toEqual({ error: 'invalid_client', error_description: 'client_id is missing' });
    const right = await refresh(basic(clientId, secret));
    expect(right.status).toBe(200);
    const revoked = await fetch(`${bed.baseUrl}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, secret) },
      body: new URLSearchParams({ token: String(((await right.json()) as Json).access_token) }).toString(),
    });
    expect(revoked.status).toBe(200);
  });

  test('a message without jsonrpc is -32600; tools/call without params is -32602 with a sentence', async () => {
    const { access } = await tokenOfOwner();
    const missing = await rawMcp(access, { accept: 'application/json', body: { id: 1, method: 'tools/list' } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { code: -32600 } });
    const bare = await rawMcp(access, { accept: 'application/json', body: { jsonrpc: '2.0', id: 2, method: 'tools/call' } });
    expect(bare.status).toBe(200);
    const answer = (await bare.json()) as { id: number; error: { code: number; message: string } };
    expect(answer).toMatchObject({ id: 2, error: { code: -32602 } });
    expect(answer.error.message).toMatch(/^Invalid params for tools\/call: params: /);
  });

  test('a failing OAuth store is logged and answered 500 server_error', async () => {
    const failing = new Proxy(bed.database.pool, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? () => Promise.reject(new Error('store unreachable')) : value;
      },
    }) as DatabasePool;
    const clientId = await publicClient();
    const assistant = await startAssistant(bed, { db: failing });
    try {
      const token = await fetch(`${assistant.origin}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: generateToken('refresh'), client_id: clientId }).toString(),
      });
      expect(token.status).toBe(500);
      expect(await token.json()).toMatchObject({ error: 'server_error' });
      const registration = await register({ client_name: 'x', redirect_uris: [testRedirectUrl], token_endpoint_auth_method: 'none' }, assistant.origin);
      expect(registration).toMatchObject({ status: 500, body: { error: 'server_error' } });
      expect(assistant.logs.filter((line) => line.includes('oauth store failed') && line.includes('store unreachable')).length).toBeGreaterThanOrEqual(2);
    } finally {
      await assistant.close();
    }
  });
});

describe('for the person connecting an assistant', () => {
  test('the sign-in page says where a code comes from, names the client and the redirect host, ties its error to the field, and has a Deny button', async () => {
    const clientId = await publicClient(testRedirectUrl, 'Helpful Assistant');
    const url = authorizeUrl(clientId);
    const page = await (await fetch(url)).text();
    expect(page).toContain('console');
    expect(page).toContain('supply-api console sign-in-code');
    expect(page).toContain(clientId);
    expect(page).toContain('<strong>127.0.0.1:9</strong>');
    expect(page).toMatch(/<button[^>]*name="decision"[^>]*value="deny"[^>]*formnovalidate/);
    const wrong = await (await submitSignInCode(url, 'AAAA-BBBB-CCCC')).text();
    const errorId = /<p class="error" id="([^"]+)" role="alert">/.exec(wrong)?.[1];
    expect(errorId).toBeDefined();
    expect(wrong).toMatch(new RegExp(`<input[^>]*aria-describedby="[^"]*${errorId ?? ''}[^"]*"[^>]*aria-invalid="true"`));
    const denied = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=deny', redirect: 'manual' });
    expect(denied.status).toBe(302);
    const location = new URL(denied.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('st-1');
    expect(location.searchParams.has('code')).toBe(false);
  });

  test('a client pointed at another loopback name of a loopback server signs in and works', async () => {
    const alias = bed.baseUrl.replace('127.0.0.1', 'localhost');
    const { client } = await signIn(alias, () => codeFor(tenantA, owner(tenantA)), { provider: new MemoryOAuthProvider({ client_name: 'Alias Client' }) });
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
