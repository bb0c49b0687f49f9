import { createHash, randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDatabasePool, requestPoolTimeouts } from '../../src/platform/db.js';
import { startAssistant, type AssistantServer } from '../support/assistantServer.js';
import { signIn, testRedirectUrl } from '../support/mcpClient.js';
import { accessTokenOf, bed, codeFor, owner, tenantA, useMcpBed } from '../support/mcpSuite.js';
import { postgresProxy } from '../support/postgresProxy.js';
import type { TcpProxy } from '../support/tcpProxy.js';

/**
 * The authorization server and the bearer check of /mcp when their store (Postgres) cannot be
 * reached: 503 with Retry-After (`temporarily_unavailable` in OAuth's JSON, a JSON-RPC error on
 * /mcp), never 500; everything works again once the database is back. The assistant's only way to
 * the database is a TCP proxy that goes away (connections reset, new ones refused).
 */
useMcpBed();

let proxy: TcpProxy;
let pool: DatabasePool;
let assistant: AssistantServer;
let clientId = '';
let accessToken = '';

const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');

beforeAll(async () => {
  const proxied = await postgresProxy(bed.database.url);
  proxy = proxied.proxy;
  pool = await createDatabasePool(proxied.url, 2, 'postgres', { resetOnRelease: false, timeouts: requestPoolTimeouts });
  assistant = await startAssistant(bed, { db: pool, addressLimits: { register: { points: 1000, windowSeconds: 3600 } } });
  const registered = await register();
  expect(registered.status).toBe(201);
  clientId = String(registered.body.client_id);
  const { client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)));
  await client.close();
  accessToken = accessTokenOf(provider);
}, 120_000);

afterAll(async () => {
  await assistant?.close();
  await pool?.end();
  await proxy?.stop();
});

async function register(): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(`${assistant.origin}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Outage Test Client', redirect_uris: [testRedirectUrl], token_endpoint_auth_method: 'none' }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

async function token(): Promise<Response> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code: 'not-a-code', code_verifier: verifier, redirect_uri: testRedirectUrl });
  return fetch(`${assistant.origin}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
}

async function authorize(): Promise<Response> {
  const url = new URL('/authorize', assistant.origin);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: testRedirectUrl, code_challenge: challenge, code_challenge_method: 'S256', state: 'st-1' })) {
    url.searchParams.set(name, value);
  }
  return fetch(url, { redirect: 'manual' });
}

async function mcp(): Promise<Response> {
  return fetch(assistant.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${accessToken}`, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

describe('the OAuth store unreachable', () => {
  test('/register, /token, /authorize and the bearer check of /mcp answer 503 with Retry-After, then work again', async () => {
    await proxy.stop();
    try {
      const registered = await register();
      expect({ status: registered.status, error: registered.body.error, retryAfter: registered.headers.get('retry-after') }).toEqual({ status: 503, error: 'temporarily_unavailable', retryAfter: '5' });

      const exchanged = await token();
      expect({ status: exchanged.status, body: (await exchanged.json()) as unknown, retryAfter: exchanged.headers.get('retry-after') }).toMatchObject({
        status: 503,
        body: { error: 'temporarily_unavailable' },
        retryAfter: '5',
      });

      const authorized = await authorize();
      expect({ status: authorized.status, body: (await authorized.json()) as unknown }).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });

      const called = await mcp();
      expect({ status: called.status, body: (await called.json()) as unknown, retryAfter: called.headers.get('retry-after') }).toMatchObject({
        status: 503,
        body: { jsonrpc: '2.0', error: { code: -32000 } },
        retryAfter: '5',
      });
    } finally {
      await proxy.start();
    }
    // Back: each endpoint answers as it does normally.
    expect((await register()).status).toBe(201);
    expect((await token()).status).toBe(400);
    expect((await authorize()).status).toBe(200);
    expect((await mcp()).status).toBe(200);
  }, 60_000);
});
