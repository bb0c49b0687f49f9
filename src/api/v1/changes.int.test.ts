import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { apiClient, useApiBed } from '../../../test/support/useApiBed.js';
import { silentLogger } from '../../../test/support/databases.js';
import { ordersProjection } from '../../../projections/orders/projection.js';
import { issuableScopes } from '../../keys/scopes.js';
import { driverText, sql } from '../../platform/sql.js';
import { pointViews, loadGenerations } from '../../projecting/generations.js';
import { replayProjections } from '../../projecting/replay.js';

type Item = Record<string, unknown>;
type FeedPage = { data: Item[]; hasMore: boolean; nextCursor?: string; syncCursor: string };
type ListPage = { data: Item[]; hasMore: boolean; nextCursor?: string };

const feeds = [
  { feed: '/v1/orders/changes', list: '/v1/orders', id: 'orderId' },
  { feed: '/v1/fulfillments/changes', list: '/v1/fulfillments', id: 'orderId' },
  { feed: '/v1/inventory/balances/changes', list: '/v1/inventory/balances', id: 'boxId' },
] as const;

// Feeds follow the projector's checkpoint, which waits for the cluster-wide log horizon: a cluster of the file's own.
const given = useApiBed({ ownCluster: true, scopes: issuableScopes, bed: { tenants: 2 }, bootTimeoutMs: 240_000 });
const { allPages } = apiClient(given);

async function feedPage(path: string, cursor?: string, limit = 200): Promise<FeedPage> {
  const response = await given.bed.request(`${path}?limit=${limit}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { key: given.key });
  expect(response.status, response.text).toBe(200);
  return response.body as FeedPage;
}

/** Reads a feed from `cursor` until hasMore is false: the items, the cursor to keep and the number of requests. */
async function sync(path: string, cursor?: string, limit = 200): Promise<{ items: Item[]; cursor: string; requests: number }> {
  const items: Item[] = [];
  let at = cursor;
  for (let requests = 1; ; requests += 1) {
    const page = await feedPage(path, at, limit);
    items.push(...page.data);
    if (page.hasMore) expect(page.nextCursor).toBe(page.syncCursor);
    else expect(page).not.toHaveProperty('nextCursor');
    at = page.syncCursor;
    if (!page.hasMore) return { items, cursor: page.syncCursor, requests };
  }
}

const wholeList = (path: string) => allPages<Item>(path);

/** The latest item of each id, in the order the items came. */
function latestById(items: readonly Item[], id: string): Map<string, Item> {
  const latest = new Map<string, Item>();
  for (const item of items) {
    latest.delete(String(item[id]));
    latest.set(String(item[id]), item);
  }
  return latest;
}

const byId = (id: string) => (a: Item, b: Item) => (String(a[id]) < String(b[id]) ? -1 : String(a[id]) > String(b[id]) ? 1 : 0);

describe('change feeds', () => {
  test('given a workspace, when a feed is read from no cursor in small pages, then it holds every item of the list once, in the list representation', async () => {
    for (const { feed, list, id } of feeds) {
      const listed = await wholeList(list);
      expect(listed.length, list).toBeGreaterThan(0);
      const { items, requests } = await sync(feed, undefined, 7);
      expect(requests).toBeGreaterThan(1);
      expect(new Set(items.map((item) => item[id])).size, feed).toBe(items.length);
      expect([...items].sort(byId(id))).toEqual([...listed].sort(byId(id)));
    }
  });

  test('given nothing changed since a sync, then one request answers an empty page and the same cursor', async () => {
    for (const { feed } of feeds) {
      const { cursor } = await sync(feed);
      const again = await feedPage(feed, cursor);
      expect(again).toEqual({ data: [], hasMore: false, syncCursor: cursor });
    }
  });

  test('given orders placed and advanced after a sync, then the feed from the saved cursor gives exactly those orders, once each, as they are now, last changed last', async () => {
    const { cursor } = await sync('/v1/orders/changes');
    const placed = await given.bed.console.placeOrder({ workspaceId: given.tenant.workspaceId });
    await given.bed.console.advanceOrder({ workspaceId: given.tenant.workspaceId, orderId: placed.orderId });
    await given.bed.console.advanceOrder({ workspaceId: given.tenant.workspaceId, orderId: placed.orderId });
    await given.bed.settle();
    const changed = await sync('/v1/orders/changes', cursor);
    expect(changed.requests).toBe(1);
    expect(changed.items.map((order) => order.orderId)).toEqual([placed.orderId]);
    const current = (await given.bed.request(`/v1/orders/${encodeURIComponent(placed.orderId)}`, { key: given.key })).body as Item;
    expect(changed.items[0]).toMatchObject({ orderId: placed.orderId, status: current.status, version: current.version });
    expect(changed.items[0]).not.toHaveProperty('lines');
    // Another workspace's changes are not in this one's feed.
    const other = given.otherTenant;
    const since = changed.cursor;
    await given.bed.console.placeOrder({ workspaceId: other.workspaceId });
    await given.bed.settle();
    expect((await feedPage('/v1/orders/changes', since)).data).toEqual([]);
  });

  test('given a cursor of another operation, a changed cursor, or a bad limit, then 400 common.invalid_request', async () => {
    const { cursor: ordersCursor } = await sync('/v1/orders/changes');
    const listCursor = ((await given.bed.request('/v1/orders?limit=1', { key: given.key })).body as ListPage).nextCursor ?? '';
    for (const [path, cursor] of [
      ['/v1/fulfillments/changes', ordersCursor],
      ['/v1/orders/changes', listCursor],
      ['/v1/orders', ordersCursor],
      ['/v1/orders/changes', `${ordersCursor.slice(0, -2)}AA`],
    ] as const) {
      const response = await given.bed.request(`${path}?cursor=${encodeURIComponent(cursor)}`, { key: given.key });
      expect(response.status, `${path} ${cursor}`).toBe(400);
      expect(response.body).toMatchObject({ code: 'common.invalid_request' });
    }
    for (const limit of ['0', '201', '1.5', 'x']) {
      const response = await given.bed.request(`/v1/inventory/balances/changes?limit=${limit}`, { key: given.key });
      expect(response.status).toBe(400);
    }
  });

  test('given a key without the scope, then 403 api_keys.scope_missing', async () => {
    const ordersOnly = await given.bed.issueKey(given.tenant, ['orders:read']);
    expect((await given.bed.request('/v1/orders/changes', { key: ordersOnly })).status).toBe(200);
    for (const path of ['/v1/fulfillments/changes', '/v1/inventory/balances/changes']) {
      const response = await given.bed.request(path, { key: ordersOnly });
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ code: 'api_keys.scope_missing' });
    }
  });

  test('given orders placed and advanced by concurrent writers while a client polls the feed, then the client ends with every order as the list has it (nothing committed after a cursor is missed)', async () => {
    const { items: initial, cursor: start } = await sync('/v1/orders/changes');
    const known = latestById(initial, 'orderId');
    let cursor = start;
    let writing = true;
    const poller = (async () => {
      while (writing) {
        const page = await feedPage('/v1/orders/changes', cursor, 5);
        for (const [id, item] of latestById(page.data, 'orderId')) known.set(id, item);
        cursor = page.syncCursor;
      }
    })();
    const writers = Array.from({ length: 4 }, async () => {
      for (let round = 0; round < 4; round += 1) {
        const { orderId } = await given.bed.console.placeOrder({ workspaceId: given.tenant.workspaceId });
        await given.bed.console.advanceOrder({ workspaceId: given.tenant.workspaceId, orderId });
        const earlier = given.tenant.orderIds[round];
        if (earlier !== undefined) await given.bed.console.advanceOrder({ workspaceId: given.tenant.workspaceId, orderId: earlier }).catch(() => undefined);
      }
    });
    await Promise.all(writers);
    await given.bed.settle();
    writing = false;
    await poller;
    const rest = await sync('/v1/orders/changes', cursor, 5);
    for (const [id, item] of latestById(rest.items, 'orderId')) known.set(id, item);
    const listed = await wholeList('/v1/orders');
    expect([...known.values()].sort(byId('orderId'))).toEqual([...listed].sort(byId('orderId')));
  }, 120_000);

  test('given an order appended while the projector cannot commit, then a sync read meanwhile ends at what the read model has committed, and the next sync from its cursor gives the order', async () => {
    // The projector's batch starts by moving the checkpoints: holding the row holds the batch back.
    // (A connection of its own: the console's appends must not run inside this transaction.)
    const holder = new pg.Client({ connectionString: given.bed.database.url });
    await holder.connect();
    let placed: { orderId: string; cursor: string };
    try {
      await holder.query('BEGIN');
      const hold = sql.typeAlias('void')`SELECT FROM projection_generations WHERE projection = ${'orders'} AND state = 'active' FOR UPDATE`;
      await holder.query(driverText(hold), [...hold.values]);
      const order = await given.bed.console.placeOrder({ workspaceId: given.tenant.workspaceId });
      // Nothing to wait for: this transaction (it holds a row lock, so it has a transaction id) also
      // holds the log's horizon below the new event, so the projector cannot take it before the COMMIT.
      const during = await sync('/v1/orders/changes');
      expect(during.items.map((item) => item.orderId)).not.toContain(order.orderId);
      placed = { orderId: order.orderId, cursor: during.cursor };
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
    await given.bed.settle();
    expect((await sync('/v1/orders/changes', placed.cursor)).items.map((item) => item.orderId)).toEqual([placed.orderId]);
  });

  test('given a saved cursor, when orders are rebuilt (blue/green replay), then the cursor still reads exactly what changed after it', async () => {
    const { cursor, items: before } = await sync('/v1/orders/changes');
    const generation = (await loadGenerations(given.bed.database.pool, ['active'])).find((g) => g.projection === 'orders')?.generation;
    await replayProjections({ pool: given.bed.database.pool, eventStore: given.bed.eventStore, projections: [ordersProjection], logger: silentLogger });
    expect((await loadGenerations(given.bed.database.pool, ['active'])).find((g) => g.projection === 'orders')?.generation).toBe((generation ?? 0) + 1);
    expect(await feedPage('/v1/orders/changes', cursor)).toEqual({ data: [], hasMore: false, syncCursor: cursor });
    // A full sync reads the same items in the same order as before the rebuild.
    expect((await sync('/v1/orders/changes')).items).toEqual(before);
    const placed = await given.bed.console.placeOrder({ workspaceId: given.tenant.workspaceId });
    await given.bed.settle();
    expect((await sync('/v1/orders/changes', cursor)).items.map((order) => order.orderId)).toEqual([placed.orderId]);
  }, 120_000);

  test('given the active generation predates change positions, then 503 common.service_unavailable with Retry-After; the feed answers again once it has them', async () => {
    const active = (await loadGenerations(given.bed.database.pool, ['active'])).find((g) => g.projection === 'orders');
    if (active === undefined) throw new Error('no active orders generation');
    const { cursor } = await sync('/v1/orders/changes');
    // The view as a generation of orders version 2 has it: every column but the change position.
    await given.bed.database.pool.query(sql.typeAlias('void')`DROP VIEW read_models.orders`);
    await given.bed.database.pool.query(sql.typeAlias('void')`
      CREATE VIEW read_models.orders AS SELECT tenant_id, order_id, creation_seq, number, type, status, requester_id, clinic_id,
        destination_warehouse_id, preferred_source_warehouse_id, justification, approval_plan, version, created_at, updated_at,
        submitted_at, approved_at, dispatched_at, delivered_at, received_at, closed_at, item_json
      FROM ${sql.identifier([active.schemaName, 'orders'])}
    `);
    try {
      const response = await given.bed.request(`/v1/orders/changes?cursor=${encodeURIComponent(cursor)}`, { key: given.key });
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ code: 'common.service_unavailable', status: 503 });
      expect(response.headers.get('retry-after')).toBe('30');
      expect((await given.bed.request('/v1/orders?limit=1', { key: given.key })).status).toBe(200);
    } finally {
      await pointViews(given.bed.database.pool, ordersProjection, active.schemaName);
    }
    expect((await feedPage('/v1/orders/changes', cursor)).data).toEqual([]);
  });
});
