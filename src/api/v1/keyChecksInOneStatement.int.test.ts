import { describe, expect, test } from 'vitest';
import { useApiBed } from '../../../test/support/useApiBed.js';
import { expectRevocationActsUnderLoad, getWithKey } from '../../../test/support/revocationUnderLoad.js';

// The hot operations take the key's principal from a per-process cache and check the key inside
// their one read statement: these tests prove that revocation and suspension still act on the very
// next request, whatever that request asks for.

const given = useApiBed();

async function get(path: string, key: string) {
  return getWithKey(given.bed.baseUrl, path, key);
}

describe('revocation under load', () => {
  test('given clients hammering the hot operations with a key, when the key is revoked, then no request started after the revocation committed is answered 200', async () => {
    await expectRevocationActsUnderLoad(given.bed, given.tenant);
  });
});

describe('401 comes first, even for answers decided without reading a row', () => {
  test('given a cached key that was revoked, when it asks for what would be 404, 400, 403 or an empty page, then 401 without rate-limit headers', async () => {
    const tenant = given.tenant;
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
      const key = await given.bed.issueKey(tenant, ['orders:read', 'inventory:read']);
      expect({ path, status: (await get(path, key)).status }).toEqual({ path, status: before });
      expect((await get('/v1/orders?limit=1', key)).status).toBe(200);
      await given.bed.revokeKey(key);
      expect({ path, ...(await get(path, key)) }).toEqual({ path, status: 401, rateLimitHeaders: false });
    }
  });

  test('given a cached key whose tenant is suspended, when it reads an empty page, then 401; once reactivated, 200 again', async () => {
    const tenant = given.otherTenant;
    const key = await given.bed.issueKey(tenant, ['inventory:read']);
    const emptyPage = '/v1/inventory/balances?catalogItemId=no-such-item';
    expect((await get(emptyPage, key)).status).toBe(200);
    await given.bed.console.suspendTenant({ workspaceId: tenant.workspaceId });
    await given.bed.settle();
    expect(await get(emptyPage, key)).toEqual({ status: 401, rateLimitHeaders: false });
    await given.bed.console.reactivateTenant({ workspaceId: tenant.workspaceId });
    await given.bed.settle();
    expect((await get(emptyPage, key)).status).toBe(200);
  });
});
