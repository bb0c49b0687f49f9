import { describe, expect, test } from 'vitest';
import { apiClient, useApiBed } from '../../../test/support/useApiBed.js';
import { issuableScopes } from '../../keys/scopes.js';

const given = useApiBed({ scopes: issuableScopes, bed: { tenants: 1 } });
const { page } = apiClient(given);

/** Every item of a paginated list, page by page; `between` runs after each page. */
async function walk(path: string, limit: number, between?: (pageNumber: number) => Promise<void>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const separator = path.includes('?') ? '&' : '?';
  let cursor: string | undefined;
  for (let pageNumber = 0; ; pageNumber += 1) {
    const current = await page(`${path}${separator}limit=${limit}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(current.data.length).toBeLessThanOrEqual(limit);
    items.push(...current.data);
    if (!current.hasMore) {
      expect(current).not.toHaveProperty('nextCursor');
      return items;
    }
    expect(current.data).toHaveLength(limit);
    cursor = current.nextCursor;
    expect(typeof cursor).toBe('string');
    await between?.(pageNumber);
  }
}

describe('keyset pagination', () => {
  test('given orders created while a client pages through them, then every order is seen once, oldest first, the new ones at the end', async () => {
    const tenant = given.tenant;
    const before = await walk('/v1/orders', 200);
    const placed: string[] = [];
    const seen = await walk('/v1/orders', 17, async (pageNumber) => {
      if (pageNumber < 2) {
        placed.push((await given.bed.console.placeOrder({ workspaceId: tenant.workspaceId })).orderId);
        await given.bed.settle();
      }
    });
    const ids = seen.map((order) => order.orderId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...before.map((order) => order.orderId), ...placed]);
    // The seeded orders were numbered in creation order. (The simulated console numbers new orders
    // from what it can read, which may lag behind while other transactions of the cluster run.)
    const numbers = before.map((order) => order.number as number);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  });

  test('given balances read in pages of 7, then they are the whole list in box id byte order with no repeat', async () => {
    const whole = (await page('/v1/inventory/balances?limit=200')).data.map((b) => String(b.boxId));
    const paged = (await walk('/v1/inventory/balances', 7)).map((b) => String(b.boxId));
    expect(paged.slice(0, whole.length)).toEqual(whole);
    const byteOrder = [...paged].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(paged).toEqual(byteOrder);
    expect(new Set(paged).size).toBe(paged.length);
  });

  test('given filters sent again on every page, then each page holds only matching records', async () => {
    const closed = await walk('/v1/orders?status=closed', 5);
    expect(closed.length).toBeGreaterThan(0);
    expect(closed.every((order) => order.status === 'closed')).toBe(true);
    const all = await walk('/v1/orders', 200);
    expect(closed.map((o) => o.orderId)).toEqual(all.filter((o) => o.status === 'closed').map((o) => o.orderId));

    const warehouseId = given.tenant.warehouseIds[0] ?? '';
    const inWarehouse = await walk(`/v1/inventory/balances?warehouseId=${encodeURIComponent(warehouseId)}`, 3);
    expect(inWarehouse.every((b) => b.warehouseId === warehouseId)).toBe(true);

    const delivered = await walk('/v1/fulfillments?status=delivered', 2);
    expect(delivered.every((f) => f.status === 'delivered')).toBe(true);
  });

  test('given an unknown filter id, then the answer is an empty terminal page', async () => {
    expect(await page('/v1/inventory/balances?catalogItemId=nothing-like-this')).toEqual({ data: [], hasMore: false });
    expect(await page('/v1/inventory/balances?warehouseId=')).toEqual({ data: [], hasMore: false });
    expect(await page(`/v1/inventory/balances?warehouseId=${'w'.repeat(500)}`)).toEqual({ data: [], hasMore: false });
  });

  test('given no limit, then a page holds 50; limit 200 is accepted', async () => {
    expect((await page('/v1/orders')).data).toHaveLength(50);
    expect((await page('/v1/orders?limit=200')).data.length).toBeGreaterThan(50);
    expect((await page('/v1/orders?limit=001')).data).toHaveLength(1);
  });

  test.each(['0', '201', '-1', '+1', '1.0', '1e2', ' 1', '1 ', 'abc', '', '99999999999999999999', '0x10', '٣'])(
    'given limit=%j, then 400 common.invalid_request',
    async (limit) => {
      for (const path of ['/v1/orders', '/v1/fulfillments', '/v1/inventory/balances']) {
        const response = await given.bed.request(`${path}?limit=${encodeURIComponent(limit)}`, { key: given.key });
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({ code: 'common.invalid_request', instance: path });
      }
    },
  );

  test('given a repeated parameter or an unknown status, then 400 common.invalid_request', async () => {
    for (const path of ['/v1/orders?limit=1&limit=2', '/v1/orders?status=open', '/v1/orders?status=', '/v1/fulfillments?status=pending_approval', '/v1/orders?status=closed&status=draft']) {
      const response = await given.bed.request(path, { key: given.key });
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
    }
  });
});

describe('cursors', () => {
  test('given a changed, truncated or made-up cursor, then 400 common.invalid_request, never a silent first page', async () => {
    const first = await page('/v1/orders?limit=2');
    const cursor = first.nextCursor ?? '';
    const [payload = '', signature = ''] = cursor.split('.');
    const flip = (text: string, at: number) => `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
    const forged = Buffer.from(JSON.stringify({ v: 1, p: '0' })).toString('base64url');
    const bad = [
      `${flip(payload, 3)}.${signature}`,
      `${payload}.${flip(signature, 5)}`,
      `${payload}.${flip(signature, signature.length - 1)}`,
      cursor.slice(0, -1),
      `${forged}.${signature}`,
      payload,
      `${cursor}.x`,
      'bm90LWEtY3Vyc29y',
      '',
    ];
    for (const value of bad) {
      const response = await given.bed.request(`/v1/orders?limit=2&cursor=${encodeURIComponent(value)}`, { key: given.key });
      expect({ value, status: response.status, code: (response.body as { code: string }).code }).toEqual({ value, status: 400, code: 'common.invalid_request' });
    }
    // The cursor itself still works.
    expect((await given.bed.request(`/v1/orders?limit=2&cursor=${encodeURIComponent(cursor)}`, { key: given.key })).status).toBe(200);
  });

  test('given a cursor of one operation, when it is sent to another, then 400', async () => {
    const orders = (await page('/v1/orders?limit=1')).nextCursor ?? '';
    const fulfillments = (await page('/v1/fulfillments?limit=1')).nextCursor ?? '';
    const balances = (await page('/v1/inventory/balances?limit=1')).nextCursor ?? '';
    const misuse: [string, string][] = [
      ['/v1/fulfillments', orders],
      ['/v1/inventory/balances', orders],
      ['/v1/orders', fulfillments],
      ['/v1/orders', balances],
    ];
    for (const [path, cursor] of misuse) {
      const response = await given.bed.request(`${path}?cursor=${encodeURIComponent(cursor)}`, { key: given.key });
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
    }
  });

  test('given lists that are not paginated, then limit and cursor are ignored and the page is terminal', async () => {
    for (const path of ['/v1/clinics', '/v1/warehouses', '/v1/catalog/items', '/v1/catalog/categories']) {
      const plain = await page(path);
      const withParams = await page(`${path}?limit=1&cursor=garbage`);
      expect(withParams).toEqual(plain);
      expect(plain.hasMore).toBe(false);
      expect(plain).not.toHaveProperty('nextCursor');
    }
  });
});
