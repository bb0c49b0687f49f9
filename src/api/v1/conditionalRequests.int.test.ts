import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, test } from 'vitest';
import type { ApiTestBed } from '../../../test/support/apiTestBed.js';
import { useApiBed } from '../../../test/support/useApiBed.js';
import type { TenantSummary } from '../../console/seedSummary.js';
import { issuableScopes } from '../../keys/scopes.js';
import { v1Operations } from './operations.js';

const given = useApiBed({ scopes: issuableScopes, bed: { tenants: 1 } });
let bed: ApiTestBed;
let tenant: TenantSummary;
let key: string;
beforeEach(() => {
  ({ bed, tenant, key } = given);
});

function firstOf(ids: readonly string[]): string {
  const id = ids[0];
  if (id === undefined) throw new Error('the seed has no such id');
  return id;
}

/** One concrete URL per GET operation of the contract. */
function samplePath(template: string): string {
  const orderId = firstOf(tenant.orderIds);
  return template
    .replace('{itemId}', firstOf(tenant.itemIds))
    .replace('{boxId}', firstOf(tenant.boxIds))
    .replace('{orderId}', orderId)
    .replace('{metric}', 'LOW_STOCK');
}

const budgetHeaderNames = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy'];

describe('conditional GET on /v1', () => {
  test('every GET operation answers a strong ETag over its body bytes, and 304 with no body when If-None-Match holds it', async () => {
    const fulfilled = await bed.request('/v1/fulfillments?limit=1', { key });
    const fulfilledOrder = (fulfilled.body as { data: { orderId: string }[] }).data[0]?.orderId;
    if (fulfilledOrder === undefined) throw new Error('the seed has no fulfillment');
    const created = await bed.request('/v1/analytics/exports', { key, method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const exportId = (created.body as { exportId: string }).exportId;
    const gets = v1Operations.filter((operation) => operation.method === 'get');
    expect(gets.length).toBeGreaterThan(15);
    const answered304: string[] = [];
    for (const operation of gets) {
      const path = operation.path
        .replace('/v1/fulfillments/{orderId}', `/v1/fulfillments/${fulfilledOrder}`)
        .replace('{exportId}', exportId)
        .replace(/^.*\{.*$/, samplePath);
      const first = await bed.request(path, { key });
      expect(first.status, `${path}: ${first.text}`).toBe(200);
      const etag = first.headers.get('etag');
      expect(etag, path).toBe(`"${createHash('sha256').update(Buffer.from(first.text, 'utf8')).digest('base64url')}"`);

      const notModified = await bed.request(path, { key, headers: { 'if-none-match': etag ?? '' } });
      if (path.startsWith('/v1/analytics/')) {
        // Analytics answers carry `asOf`, the time they were computed, and a ready export a new
        // download link on every poll: a later answer is another body.
        if (notModified.status === 200) {
          expect(notModified.text).not.toBe(first.text);
          expect(notModified.headers.get('etag')).not.toBe(etag);
          continue;
        }
      }
      expect(notModified.status, path).toBe(304);
      expect(notModified.text).toBe('');
      answered304.push(operation.path);
      expect(notModified.headers.get('etag')).toBe(etag);
      expect(notModified.headers.get('cache-control')).toBe('no-store');
      expect(notModified.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      for (const name of budgetHeaderNames) expect(notModified.headers.get(name), `${path} ${name}`).not.toBeNull();
    }
    // Every operation outside analytics was checked down to its 304 (none slipped out of the loop early).
    expect(answered304).toEqual(expect.arrayContaining(gets.filter((operation) => !operation.path.startsWith('/v1/analytics/')).map((operation) => operation.path)));
  });

  test('the 304 spends the budget like a 200 and reports it in the same headers', async () => {
    const first = await bed.request('/v1/clinics', { key });
    const etag = first.headers.get('etag') ?? '';
    const before = Number(first.headers.get('x-ratelimit-remaining'));
    const second = await bed.request('/v1/clinics', { key, headers: { 'if-none-match': etag } });
    expect(second.status).toBe(304);
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(before - 1);
    expect(second.headers.get('ratelimit')).toBe(`limit=${first.headers.get('x-ratelimit-limit')}, remaining=${before - 1}, reset=${second.headers.get('x-ratelimit-reset')}`);
  });

  test('If-None-Match compares weakly across a list; another tag gets the full answer', async () => {
    const first = await bed.request('/v1/warehouses', { key });
    const etag = first.headers.get('etag') ?? '';
    expect((await bed.request('/v1/warehouses', { key, headers: { 'if-none-match': `"not-it", W/${etag}` } })).status).toBe(304);
    const other = await bed.request('/v1/warehouses', { key, headers: { 'if-none-match': '"not-it"' } });
    expect(other.status).toBe(200);
    expect(other.text).toBe(first.text);
    expect(other.headers.get('etag')).toBe(etag);
  });

  test('given an order that changes, when its old tag is sent, then the new answer and a new tag', async () => {
    const { orderId } = await bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await bed.settle();
    const before = await bed.request(`/v1/orders/${orderId}`, { key });
    const oldTag = before.headers.get('etag') ?? '';
    await bed.console.advanceOrder({ workspaceId: tenant.workspaceId, orderId });
    await bed.settle();
    const after = await bed.request(`/v1/orders/${orderId}`, { key, headers: { 'if-none-match': oldTag } });
    expect(after.status).toBe(200);
    expect((after.body as { version: number }).version).toBeGreaterThan((before.body as { version: number }).version);
    expect(after.headers.get('etag')).not.toBe(oldTag);
  });

  test('If-None-Match: * is 304 only for a /v1 answer that has a tag: never an error, never outside /v1', async () => {
    const me = await bed.request('/v1/me', { key, headers: { 'if-none-match': '*' } });
    expect(me.status).toBe(304);
    expect(me.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const missing = await bed.request('/v1/orders/no-such-order', { key, headers: { 'if-none-match': '*' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('etag')).toBeNull();
    for (const path of ['/openapi.json', '/healthz', '/docs']) {
      const answer = await bed.request(path, { headers: { 'if-none-match': '*' } });
      expect(answer.status, path).toBe(200);
      expect(answer.text.length, path).toBeGreaterThan(0);
    }
  });

  test('the export request (a POST) carries no ETag and ignores If-None-Match', async () => {
    const created = await bed.request('/v1/analytics/exports', { key, method: 'POST', body: '{}', headers: { 'content-type': 'application/json', 'if-none-match': '*' } });
    expect(created.status).toBe(202);
    expect(created.headers.get('etag')).toBeNull();
  });
});
