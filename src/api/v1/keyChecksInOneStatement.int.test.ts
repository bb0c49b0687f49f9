import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiTestBed, type ApiTestBed } from '../../../test/support/apiTestBed.js';
import type { TenantSummary } from '../../console/seedSummary.js';

// The hot operations take the key's principal from a per-process cache and check the key inside
// their one read statement: these tests prove that revocation and suspension still act on the very
// next request, whatever that request asks for.

let bed: ApiTestBed;
beforeAll(async () => {
  bed = await createApiTestBed();
});
afterAll(async () => {
  await bed?.close();
});

function firstTenant(): TenantSummary {
  const found = bed.tenants[0];
  if (!found) throw new Error('no tenant');
  return found;
}

type Outcome = { readonly startedAt: number; readonly status: number; readonly rateLimitHeaders: boolean };

async function get(path: string, key: string): Promise<Omit<Outcome, 'startedAt'>> {
  const response = await fetch(`${bed.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return { status: response.status, rateLimitHeaders: response.headers.has('x-ratelimit-remaining') };
}

describe('revocation under load', () => {
  test('given clients hammering the hot operations with a key, when the key is revoked, then no request started after the revocation committed is answered 200', async () => {
    const tenant = firstTenant();
    const key = await bed.issueKey(tenant, ['orders:read', 'inventory:read']);
    const paths = ['/v1/orders?limit=5', `/v1/orders/${encodeURIComponent(tenant.orderIds[0] ?? 'none')}`, '/v1/inventory/balances?limit=5'];
    const outcomes: Outcome[] = [];
    let revokedAt = Number.POSITIVE_INFINITY;
    const startedAfterRevocation = () => outcomes.filter((o) => o.startedAt > revokedAt).length;
    const client = async (offset: number): Promise<void> => {
      for (let i = offset; startedAfterRevocation() < 50; i += 1) {
        const startedAt = performance.now();
        const outcome = await get(paths[i % paths.length] ?? '/v1/orders', key);
        outcomes.push({ startedAt, ...outcome });
      }
    };
    const clients = Array.from({ length: 8 }, (_, index) => client(index));
    // Revoked while the clients are in full swing (the key is in the cache by then).
    while (outcomes.filter((o) => o.status === 200).length < 50) await new Promise((resolve) => setTimeout(resolve, 5));
    await bed.revokeKey(key);
    // revokeKey resolves once its UPDATE has committed.
    revokedAt = performance.now();
    await Promise.all(clients);

    const before = outcomes.filter((o) => o.startedAt < revokedAt);
    const after = outcomes.filter((o) => o.startedAt > revokedAt);
    expect(before.filter((o) => o.status === 200).length).toBeGreaterThanOrEqual(50);
    expect(after.length).toBeGreaterThanOrEqual(50);
    expect(after.filter((o) => o.status !== 401)).toEqual([]);
    // A refused request spends no budget and says nothing about it.
    expect(after.filter((o) => o.rateLimitHeaders)).toEqual([]);
    // Requests in flight at the moment of the commit may have read before it: 200 or 401, nothing else.
    expect(outcomes.filter((o) => o.status !== 200 && o.status !== 401)).toEqual([]);
  });
});

describe('401 comes first, even for answers decided without reading a row', () => {
  test('given a cached key that was revoked, when it asks for what would be 404, 400, 403 or an empty page, then 401 without rate-limit headers', async () => {
    const tenant = firstTenant();
    const cases: [path: string, before: number][] = [
      ['/v1/orders/no-such-order', 404],
      [`/v1/orders/${'x'.repeat(300)}`, 404],
      ['/v1/orders?limit=0', 400],
      ['/v1/orders?cursor=made-up', 400],
      ['/v1/inventory/balances?warehouseId=no-such-warehouse', 200],
      [`/v1/inventory/balances?warehouseId=${'x'.repeat(300)}`, 200],
      ['/v1/fulfillments', 403],
    ];
    for (const [path, before] of cases) {
      // A key of its own per case, in the cache (a first request put it there) when it is revoked.
      const key = await bed.issueKey(tenant, ['orders:read', 'inventory:read']);
      expect({ path, status: (await get(path, key)).status }).toEqual({ path, status: before });
      expect((await get('/v1/orders?limit=1', key)).status).toBe(200);
      await bed.revokeKey(key);
      expect({ path, ...(await get(path, key)) }).toEqual({ path, status: 401, rateLimitHeaders: false });
    }
  });

  test('given a cached key whose tenant is suspended, when it reads an empty page, then 401; once reactivated, 200 again', async () => {
    const tenant = bed.tenants[1];
    if (!tenant) throw new Error('no second tenant');
    const key = await bed.issueKey(tenant, ['inventory:read']);
    const emptyPage = '/v1/inventory/balances?catalogItemId=no-such-item';
    expect((await get(emptyPage, key)).status).toBe(200);
    await bed.console.suspendTenant({ workspaceId: tenant.workspaceId });
    await bed.settle();
    expect(await get(emptyPage, key)).toEqual({ status: 401, rateLimitHeaders: false });
    await bed.console.reactivateTenant({ workspaceId: tenant.workspaceId });
    await bed.settle();
    expect((await get(emptyPage, key)).status).toBe(200);
  });
});
