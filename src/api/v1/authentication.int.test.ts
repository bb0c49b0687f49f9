import { describe, expect, test } from 'vitest';
import type { ApiResponse } from '../../../test/support/apiTestBed.js';
import { useApiBed } from '../../../test/support/useApiBed.js';
import { eventually } from '../../../test/support/eventually.js';
import { checksumOf, hashKey } from '../../keys/keyFormat.js';
import { issuableScopes } from '../../keys/scopes.js';
import { sql } from '../../platform/sql.js';

const given = useApiBed();

/** The parts of an answer that must not differ between causes: all but the request id. */
function comparable(response: ApiResponse) {
  const body = response.body as Record<string, unknown>;
  const { requestId, ...rest } = body;
  expect(requestId).toBe(response.headers.get('x-request-id'));
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    rateLimitHeaders: [...response.headers.keys()].filter((name) => name.toLowerCase().includes('ratelimit') || name === 'retry-after'),
    body: rest,
  };
}

/** The access-log line of an answer: why its key was refused, and the prefix it carried. */
async function refusalOf(response: ApiResponse): Promise<{ level: unknown; keyRefused: unknown; keyPrefix?: unknown }> {
  const line = await accessLogLine(response);
  expect(line.status).toBe(401);
  return { level: line.level, keyRefused: line.keyRefused, ...('keyPrefix' in line ? { keyPrefix: line.keyPrefix } : {}) };
}

/** The access-log line of an answer, once it is written (the line is written when the answer has been sent). */
function accessLogLine(response: ApiResponse): Promise<Record<string, unknown>> {
  const requestId = response.headers.get('x-request-id') ?? '';
  expect(requestId).not.toBe('');
  return eventually(() => {
    const line = given.bed.logs.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.requestId === requestId && entry.msg === 'request');
    if (line === undefined) throw new Error(`no access-log line for ${requestId}`);
    return line;
  });
}

const info = 30;

const invalidKeyAnswer = {
  status: 401,
  contentType: 'application/problem+json; charset=utf-8',
  rateLimitHeaders: [],
  body: {
    type: 'https://problems.test.example/v1/api_keys.invalid',
    title: 'Invalid API key',
    status: 401,
    detail: 'Send a valid, active API key as "Authorization: Bearer <API_KEY>".',
    instance: '/v1/orders',
    code: 'api_keys.invalid',
  },
};

describe('every key problem gives the same 401 api_keys.invalid', () => {
  test('given requests without a usable key, when they read orders, then each answer is identical but for the request id', async () => {
    const key = await given.bed.issueKey(given.tenant, ['orders:read']);
    const secret = key.slice(9, 33);
    const wrongChecksum = `svc_test_${secret}_${checksumOf(secret) === 'AAAA' ? 'AAAB' : 'AAAA'}`;
    const otherSecret = `${secret.slice(0, 23)}${secret.endsWith('x') ? 'y' : 'x'}`;
    const unknownButWellFormed = `svc_test_${otherSecret}_${checksumOf(otherSecret)}`;
    const headerVariants: Record<string, Record<string, string>> = {
      missing: {},
      empty: { authorization: '' },
      'scheme only': { authorization: 'Bearer' },
      'other scheme': { authorization: `Basic ${key}` },
      'token scheme': { authorization: `Token ${key}` },
      quoted: { authorization: `Bearer "${key}"` },
      truncated: { authorization: `Bearer ${key.slice(0, -1)}` },
      'wrong checksum': { authorization: `Bearer ${wrongChecksum}` },
      'unknown key': { authorization: `Bearer ${unknownButWellFormed}` },
      'key with a trailing word': { authorization: `Bearer ${key} extra` },
      'X-API-Key header': { 'x-api-key': key },
      jwt: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' },
    };
    const otherPrefixSecret = `${secret.startsWith('A') ? 'B' : 'A'}${secret.slice(1)}`;
    headerVariants['unknown prefix'] = { authorization: `Bearer svc_test_${otherPrefixSecret}_${checksumOf(otherPrefixSecret)}` };
    // Logged (at info, with the request) but never answered: why, and the prefix when the text has the key format.
    const logged: Record<string, { keyRefused: string; keyPrefix?: string }> = {
      missing: { keyRefused: 'missing' },
      empty: { keyRefused: 'scheme' },
      'scheme only': { keyRefused: 'scheme' },
      'other scheme': { keyRefused: 'scheme' },
      'token scheme': { keyRefused: 'scheme' },
      quoted: { keyRefused: 'malformed' },
      truncated: { keyRefused: 'malformed' },
      'wrong checksum': { keyRefused: 'checksum', keyPrefix: key.slice(0, 12) },
      'unknown key': { keyRefused: 'mismatch', keyPrefix: key.slice(0, 12) },
      'unknown prefix': { keyRefused: 'unknown', keyPrefix: `svc_test_${otherPrefixSecret.slice(0, 3)}` },
      'key with a trailing word': { keyRefused: 'scheme' },
      'X-API-Key header': { keyRefused: 'missing' },
      jwt: { keyRefused: 'malformed' },
    };
    for (const [cause, headers] of Object.entries(headerVariants)) {
      const response = await given.bed.request('/v1/orders', { headers });
      expect({ cause, ...comparable(response) }).toEqual({ cause, ...invalidKeyAnswer });
      expect({ cause, ...(await refusalOf(response)) }).toEqual({ cause, level: info, ...logged[cause] });
    }
    const inQuery = await given.bed.request(`/v1/orders?api_key=${key}&key=${key}`);
    expect(comparable(inQuery)).toEqual(invalidKeyAnswer);
  });

  test('given a valid key, when the scheme is written in any case, then it is accepted', async () => {
    const key = await given.bed.issueKey(given.tenant, ['orders:read']);
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const response = await given.bed.request('/v1/orders?limit=1', { headers: { authorization: `${scheme} ${key}` } });
      expect(response.status).toBe(200);
    }
  });

  test('given a key that was revoked, when it is used on the very next request, then it answers 401 like any other key problem', async () => {
    const key = await given.bed.issueKey(given.tenant, ['orders:read']);
    expect((await given.bed.request('/v1/orders?limit=1', { key })).status).toBe(200);
    await given.bed.revokeKey(key);
    const refused = await given.bed.request('/v1/orders', { key });
    expect(comparable(refused)).toEqual(invalidKeyAnswer);
    // The orders list checks a cached key in its read statement: refused there, the reason is still known.
    expect(await refusalOf(refused)).toEqual({ level: info, keyRefused: 'revoked', keyPrefix: key.slice(0, 12) });
    expect(await refusalOf(await given.bed.request('/v1/clinics', { key }))).toEqual({ level: info, keyRefused: 'revoked', keyPrefix: key.slice(0, 12) });
  });

  test('given a key whose member is suspended, when it reads, then 401 at once, and it stays refused after the member is reactivated', async () => {
    const owner = given.otherTenant;
    const memberId = owner.memberIds[0] ?? '';
    const key = await given.bed.issueKey(owner, ['orders:read']);
    expect((await given.bed.request('/v1/orders?limit=1', { key })).status).toBe(200);

    await given.bed.console.suspendMember({ workspaceId: owner.workspaceId, memberId });
    await given.bed.settle();
    const suspended = await given.bed.request('/v1/orders', { key });
    expect(comparable(suspended)).toEqual(invalidKeyAnswer);
    expect(await refusalOf(suspended)).toEqual({ level: info, keyRefused: 'member_suspended', keyPrefix: key.slice(0, 12) });

    await given.bed.console.reactivateMember({ workspaceId: owner.workspaceId, memberId });
    await given.bed.settle();
    const reactivated = await given.bed.request('/v1/orders', { key });
    expect(comparable(reactivated)).toEqual(invalidKeyAnswer);
    expect(await refusalOf(reactivated)).toEqual({ level: info, keyRefused: 'member_deactivated_since_issued', keyPrefix: key.slice(0, 12) });
    // A key issued after the reactivation works.
    const fresh = await given.bed.issueKey(owner, ['orders:read']);
    expect((await given.bed.request('/v1/orders?limit=1', { key: fresh })).status).toBe(200);
  });

  test('given a suspended tenant, when any of its keys reads, then 401; once reactivated, its keys work again', async () => {
    const workspace = given.otherTenant;
    const key = await given.bed.issueKey(workspace, ['orders:read']);
    await given.bed.console.suspendTenant({ workspaceId: workspace.workspaceId });
    await given.bed.settle();
    expect(comparable(await given.bed.request('/v1/orders', { key }))).toEqual(invalidKeyAnswer);
    const me = await given.bed.request('/v1/me', { key });
    expect(me.status).toBe(401);
    expect(await refusalOf(me)).toEqual({ level: info, keyRefused: 'tenant_suspended', keyPrefix: key.slice(0, 12) });
    await given.bed.console.reactivateTenant({ workspaceId: workspace.workspaceId });
    await given.bed.settle();
    expect((await given.bed.request('/v1/orders?limit=1', { key })).status).toBe(200);
  });
});

describe('scopes', () => {
  test('given a key without the scope, when it calls an operation, then 403 api_keys.scope_missing that does not name the scope', async () => {
    const key = await given.bed.issueKey(given.tenant, ['catalog:read']);
    const cases: [string, string][] = [
      ['/v1/clinics', 'clinics:read'],
      ['/v1/warehouses', 'clinics:read'],
      ['/v1/inventory/balances', 'inventory:read'],
      ['/v1/orders', 'orders:read'],
      ['/v1/fulfillments', 'fulfillment:read'],
      [`/v1/orders/${given.tenant.orderIds[0] ?? 'x'}`, 'orders:read'],
    ];
    for (const [path, scope] of cases) {
      const response = await given.bed.request(path, { key });
      const body = response.body as Record<string, unknown>;
      expect({ path, status: response.status, code: body.code }).toEqual({ path, status: 403, code: 'api_keys.scope_missing' });
      const { instance, ...named } = body;
      expect(instance).toBe(path);
      expect(JSON.stringify(named)).not.toContain(scope);
      expect(JSON.stringify(named)).not.toContain(scope.split(':')[0]);
    }
    // GET /v1/me needs no scope.
    expect((await given.bed.request('/v1/me', { key })).status).toBe(200);
  });

  test('given a stored key that holds a scope no key may hold, when it calls anything, then 403 common.forbidden (the safety check behind the scope check)', async () => {
    const workspace = given.tenant;
    const secret = 'Zz9forbiddenScopeKey0001';
    const key = `svc_test_${secret}_${checksumOf(secret)}`;
    await given.bed.database.pool.query(sql.typeAlias('void')`
      INSERT INTO api_keys (tenant_id, prefix, key_hash, name, member_id, scopes, status, created_at)
      VALUES (${workspace.workspaceId}, ${key.slice(0, 12)}, ${hashKey(key)}, 'forged', ${workspace.memberIds[0] ?? ''},
              ${sql.array(['orders:read', 'orders.value:read'], 'text')}, 'active', now())
    `);
    for (const path of ['/v1/orders', '/v1/me']) {
      const response = await given.bed.request(path, { key });
      expect(response.status).toBe(403);
      expect((response.body as { code: string }).code).toBe('common.forbidden');
    }
  });

  test('given a key with every issuable scope, when it calls every list, then each answers 200', async () => {
    const key = await given.bed.issueKey(given.tenant, issuableScopes);
    for (const path of ['/v1/me', '/v1/clinics', '/v1/warehouses', '/v1/catalog/items', '/v1/catalog/categories', '/v1/inventory/balances', '/v1/orders', '/v1/fulfillments']) {
      expect({ path, status: (await given.bed.request(path, { key })).status }).toEqual({ path, status: 200 });
    }
  });
});

describe('secrets stay out of logs and answers', () => {
  test('given requests with good and bad keys, when the logs are read, then no key and no Authorization value appears in them', async () => {
    const key = await given.bed.issueKey(given.tenant, ['orders:read']);
    await given.bed.request('/v1/orders?limit=1', { key });
    await given.bed.request('/v1/orders', { headers: { authorization: `Bearer ${key.slice(0, -2)}zz` } });
    await given.bed.request('/v1/nowhere', { key });
    const logs = given.bed.logs.join('');
    expect(logs).toContain('/v1/orders');
    expect(logs).not.toContain(key.slice(12));
    expect(logs).not.toContain(key.slice(9, 33));
    expect(logs.toLowerCase()).not.toContain('bearer');
  });
});

describe('a key in the query string', () => {
  test('is not accepted, and never reaches the logs: api_key, key, token and access_token are redacted like the authorization header', async () => {
    const key = await given.bed.issueKey(given.tenant, ['orders:read']);
    const names = ['api_key', 'key', 'token', 'access_token', 'API_KEY', 'api%5Fkey'];
    const answers: ApiResponse[] = [];
    for (const name of names) {
      const answer = await given.bed.request(`/v1/orders?limit=1&${name}=${key}`);
      expect({ name, status: answer.status }).toEqual({ name, status: 401 });
      answers.push(answer);
    }
    // With the header the query key is ignored, and still redacted.
    const withHeader = await given.bed.request(`/v1/orders?limit=1&key=${key}`, { key });
    expect(withHeader.status).toBe(200);
    // Every answer's access-log line is written before the logs are searched.
    for (const answer of [...answers, withHeader]) await accessLogLine(answer);
    const secret = key.slice(9, 33);
    expect(given.bed.logs.filter((line) => line.includes(secret))).toEqual([]);
    for (const name of names) expect(given.bed.logs.some((line) => line.includes(`${name}=[redacted]`)), name).toBe(true);
  });
});
