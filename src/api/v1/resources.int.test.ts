import { beforeAll, describe, expect, test } from 'vitest';
import { apiClient, useApiBed, type Page } from '../../../test/support/useApiBed.js';
import { issuableScopes } from '../../keys/scopes.js';

const given = useApiBed({ scopes: issuableScopes, bed: { tenants: 1 } });
let noCostKey: string;
beforeAll(async () => {
  noCostKey = await given.bed.issueKey(given.tenant, issuableScopes.filter((scope) => scope !== 'catalog.cost:read'));
});
const client = apiClient(given);

async function get<T>(path: string, key?: string): Promise<T> {
  const response = await client.get<T>(path, key === undefined ? {} : { key });
  // Optional fields are absent, never null.
  expect(JSON.stringify(response)).not.toContain('null');
  return response;
}

const allPages = (path: string) => client.allPages(path);

const costFields = ['costStatus', 'cost', 'currency', 'costMeasurement'];

describe('resources', () => {
  test('clinics and warehouses: every location and warehouse of the tenant', async () => {
    const tenant = given.tenant;
    const clinics = await get<Page>('/v1/clinics');
    expect(clinics.data.map((c) => c.clinicId).sort()).toEqual([...tenant.clinicIds].sort());
    for (const clinic of clinics.data) expect(Object.keys(clinic).sort()).toEqual(['clinicId', 'name', 'status']);
    const warehouses = await get<Page>('/v1/warehouses');
    expect(warehouses.data.map((w) => w.warehouseId).sort()).toEqual([...tenant.warehouseIds].sort());
    expect(new Set(warehouses.data.map((w) => w.kind))).toEqual(new Set(['central', 'express']));
    for (const warehouse of warehouses.data) {
      expect(warehouse.kind === 'express').toBe('clinicId' in warehouse);
    }
  });

  test('catalog items: cost fields only with catalog.cost:read, otherwise all four absent', async () => {
    const withCost = await get<Page>('/v1/catalog/items', given.key);
    const withoutCost = await get<Page>('/v1/catalog/items', noCostKey);
    expect(withCost.data.length).toBeGreaterThan(0);
    expect(withCost.data.every((item) => 'costStatus' in item)).toBe(true);
    expect(withCost.data.some((item) => 'cost' in item && 'currency' in item && 'costMeasurement' in item)).toBe(true);
    for (const item of withoutCost.data) {
      expect(costFields.filter((field) => field in item)).toEqual([]);
    }
    const stripped = withCost.data.map((item) => Object.fromEntries(Object.entries(item).filter(([field]) => !costFields.includes(field))));
    expect(stripped).toEqual(withoutCost.data);

    const first = withCost.data[0] as { itemId: string };
    expect(await get(`/v1/catalog/items/${encodeURIComponent(first.itemId)}`, given.key)).toEqual(first);
    expect(await get(`/v1/catalog/items/${encodeURIComponent(first.itemId)}`, noCostKey)).toEqual(stripped[0]);
  });

  test('categories: every category an item points at is listed', async () => {
    const categories = await get<Page<{ categoryId: string; name: string; parentCategoryId?: string }>>('/v1/catalog/categories');
    const ids = new Set(categories.data.map((c) => c.categoryId));
    const items = await get<Page<{ categoryId: string }>>('/v1/catalog/items');
    expect(items.data.every((item) => ids.has(item.categoryId))).toBe(true);
  });

  test('one box, its balance and its movements agree with the balances list', async () => {
    const balances = await allPages('/v1/inventory/balances');
    const balance = balances.find((b) => Number(b.reserved) > 0) ?? balances[0];
    if (!balance) throw new Error('no balance');
    const boxId = encodeURIComponent(String(balance.boxId));
    expect(balance.available).toBe(Number(balance.onHand) - Number(balance.reserved));
    expect(await get(`/v1/inventory/boxes/${boxId}/balance`)).toEqual(balance);
    const box = await get<Record<string, unknown>>(`/v1/inventory/boxes/${boxId}`);
    expect(box).toMatchObject({ boxId: balance.boxId, catalogItemId: balance.catalogItemId, warehouseId: balance.warehouseId });
    expect(Object.keys(box)).toEqual(expect.arrayContaining(['code', 'status', 'origin']));
    const movements = await get<Page<{ occurredAt: string; quantityDelta: number; boxId: string; type: string; reservedDelta?: number }>>(`/v1/inventory/boxes/${boxId}/movements?limit=1`);
    expect(movements.hasMore).toBe(false);
    expect(movements.data[0]?.type).toBe('receive');
    expect(movements.data.every((m) => m.boxId === balance.boxId)).toBe(true);
    const occurred = movements.data.map((m) => m.occurredAt);
    expect(occurred).toEqual([...occurred].sort());
    // The ledger adds up to the balance.
    expect(movements.data.reduce((sum, m) => sum + m.quantityDelta, 0)).toBe(balance.onHand);
    expect(movements.data.reduce((sum, m) => sum + (m.reservedDelta ?? 0), 0)).toBe(balance.reserved);
  });

  test('orders: never value, currency of the order, patientRef or evaluatedValue; line cost only with catalog.cost:read', async () => {
    const orders = await allPages('/v1/orders');
    expect(orders.length).toBeGreaterThan(0);
    for (const order of orders) {
      expect(Object.keys(order).sort()).toEqual(['clinicId', 'destinationWarehouseId', 'number', 'orderId', 'requesterId', 'status', 'type', 'version']);
    }
    const sample = orders.filter((_, index) => index % 7 === 0);
    let plansSeen = 0;
    let costedLines = 0;
    for (const listed of sample) {
      const path = `/v1/orders/${encodeURIComponent(String(listed.orderId))}`;
      const order = await get<Record<string, unknown> & { lines: Record<string, unknown>[]; approvalPlan?: Record<string, unknown> }>(path, given.key);
      expect(order).toMatchObject(listed);
      for (const forbidden of ['value', 'currency', 'patientRef']) expect(order).not.toHaveProperty(forbidden);
      if (order.approvalPlan) {
        plansSeen += 1;
        expect(order.approvalPlan).not.toHaveProperty('evaluatedValue');
      }
      expect(order.lines.length).toBeGreaterThan(0);
      costedLines += order.lines.filter((line) => 'unitCost' in line && 'currency' in line).length;
      const withoutCost = await get<{ lines: Record<string, unknown>[] }>(path, noCostKey);
      for (const line of withoutCost.lines) {
        expect(line).not.toHaveProperty('unitCost');
        expect(line).not.toHaveProperty('currency');
      }
    }
    expect(plansSeen).toBeGreaterThan(0);
    expect(costedLines).toBeGreaterThan(0);
  });

  test('an order placed and advanced in the console shows its new status and a higher version', async () => {
    const tenant = given.tenant;
    const { orderId } = await given.bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await given.bed.settle();
    const placed = await get<{ status: string; version: number }>(`/v1/orders/${orderId}`);
    await given.bed.console.advanceOrder({ workspaceId: tenant.workspaceId, orderId });
    await given.bed.settle();
    const advanced = await get<{ status: string; version: number }>(`/v1/orders/${orderId}`);
    expect(advanced.status).not.toBe(placed.status);
    expect(advanced.version).toBe(placed.version + 1);
    const list = await allPages('/v1/orders');
    expect(list.at(-1)).toMatchObject({ orderId, status: advanced.status, version: advanced.version });
  });

  test('fulfillments: list records and the custody history of one order', async () => {
    const records = await allPages('/v1/fulfillments');
    expect(records.length).toBeGreaterThan(0);
    // The seed holds both a closed fulfillment and one still on its way: what follows checks each.
    const closed = records.find((r) => r.status === 'closed');
    const pending = records.find((r) => r.status === 'dispatched' || r.status === 'in_transit');
    expect({ closed: closed !== undefined, onItsWay: pending !== undefined }, `statuses: ${[...new Set(records.map((r) => r.status))].join(', ')}`).toEqual({ closed: true, onItsWay: true });
    const history = await get<Record<string, unknown> & { movements: unknown[] }>(`/v1/fulfillments/${encodeURIComponent(String(closed?.orderId))}`);
    expect(history).toMatchObject({ orderId: closed?.orderId, status: closed?.status, updatedAt: closed?.updatedAt });
    expect(history.movements.length).toBeGreaterThan(0);
    expect(history).toHaveProperty('closure');
    const open = await get<Record<string, unknown>>(`/v1/fulfillments/${encodeURIComponent(String(pending?.orderId))}`);
    expect(open).not.toHaveProperty('receipt');
    expect(open).not.toHaveProperty('closure');
  });
});

describe('unknown ids answer their specific 404', () => {
  test.each([
    ['/v1/catalog/items/nope', 'catalog.item_not_found'],
    ['/v1/inventory/boxes/nope', 'inventory.box_not_found'],
    ['/v1/inventory/boxes/nope/balance', 'inventory.box_not_found'],
    ['/v1/inventory/boxes/nope/movements', 'inventory.box_not_found'],
    ['/v1/orders/nope', 'orders.not_found'],
    ['/v1/fulfillments/nope', 'common.not_found'],
    ['/v1/orders/' + 'o'.repeat(5000), 'orders.not_found'],
    ['/v1/orders/%20', 'orders.not_found'],
  ])('case %#: an unknown id gets its own 404 code', async (path, code) => {
    const response = await given.bed.request(path, { key: given.key });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code, status: 404 });
  });

  test('an order without a delivery record yet: GET /v1/fulfillments/{orderId} is 404 common.not_found', async () => {
    const tenant = given.tenant;
    const { orderId } = await given.bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await given.bed.settle();
    expect((await given.bed.request(`/v1/orders/${orderId}`, { key: given.key })).status).toBe(200);
    const response = await given.bed.request(`/v1/fulfillments/${orderId}`, { key: given.key });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'common.not_found' });
  });
});
