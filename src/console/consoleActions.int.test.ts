import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { eventually } from '../../test/support/eventually.js';
import { services } from '../../test/support/services.js';
import { logStart, type EventStore } from '../eventStore/eventStore.js';
import { createPostgresEventStore } from '../eventStore/postgresEventStore.js';
import { decodeEvent, newEvent, streamNamePrefix, streams, type EventEnvelope, type OrderStatus } from '../events/index.js';
import { fixedClock } from '../platform/clock.js';
import { ConsoleError } from './consoleError.js';
import { createConsoleActions, type ConsoleActions } from './consoleActions.js';
import { generateHistory } from './history/generateHistory.js';
import type { HistoryParams } from './history/historyParams.js';
import { orderState, type OrderState } from './orderState.js';
import { seed } from './seed.js';
import type { TenantSummary } from './seedSummary.js';

const params: HistoryParams = { seed: 'console-actions', tenants: 1, days: 30, scale: 'small', asOf: '2025-11-22T00:00:00.000Z' };

type Opened = { database: TestDatabase; store: EventStore };

async function openStore(): Promise<Opened> {
  const database = await createPostgresTestDatabase();
  const store = createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url });
  return { database, store };
}

async function closeStore(opened: Opened | undefined): Promise<void> {
  await opened?.store.close();
  await opened?.database.close();
}

async function decoded(store: EventStore, streamName: string): Promise<EventEnvelope[]> {
  return (await store.readStream(streamName)).map((event) => decodeEvent(event)).filter((event): event is EventEnvelope => event !== undefined);
}

async function ordersOf(store: EventStore, workspaceId: string): Promise<OrderState[]> {
  const names = await store.streamNames(streamNamePrefix('order', workspaceId));
  const states: OrderState[] = [];
  for (const name of names) {
    const orderId = name.slice(name.lastIndexOf('.') + 1);
    const state = orderState([...(await decoded(store, name)), ...(await decoded(store, streams.fulfillment(workspaceId, orderId)))]);
    if (state !== undefined) states.push(state);
  }
  return states;
}

async function rejection(action: Promise<unknown>): Promise<ConsoleError> {
  const error: unknown = await action.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof ConsoleError)) throw new Error(`expected a ConsoleError, got ${String(error)}`);
  return error;
}

describe.runIf(services.postgres)('console actions over Postgres', () => {
  let opened: Opened | undefined;
  let store: EventStore;
  let tenant: TenantSummary;
  let actions: ConsoleActions;
  const clock = fixedClock('2025-11-22T09:30:00.000Z');

  beforeAll(async () => {
    opened = await openStore();
    store = opened.store;
    const summary = await seed({ eventStore: store, params });
    const first = summary.tenants[0];
    if (first === undefined) throw new Error('the seed made a tenant');
    tenant = first;
    actions = createConsoleActions({ eventStore: store, clock });
  });

  afterAll(() => closeStore(opened));

  it('suspends and reactivates a member, once each', async () => {
    const memberId = tenant.memberIds[1] ?? '';
    const workspaceId = tenant.workspaceId;
    await expect(actions.suspendMember({ workspaceId, memberId })).resolves.toEqual({ workspaceId, memberId, status: 'suspended' });
    expect((await rejection(actions.suspendMember({ workspaceId, memberId }))).message).toBe(`member ${memberId} is already suspended`);
    await expect(actions.reactivateMember({ workspaceId, memberId })).resolves.toEqual({ workspaceId, memberId, status: 'active' });
    expect((await rejection(actions.reactivateMember({ workspaceId, memberId }))).message).toBe(`member ${memberId} is already active`);
    const events = await decoded(store, streams.member(workspaceId, memberId));
    expect(events.slice(-2).map((event) => [event.type, event.occurredAt])).toEqual([
      ['MemberSuspended', '2025-11-22T09:30:00.000Z'],
      ['MemberReactivated', '2025-11-22T09:30:00.000Z'],
    ]);
  });

  it('refuses unknown members and workspaces, and never brings a removed member back', async () => {
    const workspaceId = tenant.workspaceId;
    expect((await rejection(actions.suspendMember({ workspaceId, memberId: 'mem_nobody' }))).message).toBe(
      `member mem_nobody does not exist in workspace ${workspaceId}`,
    );
    expect((await rejection(actions.suspendTenant({ workspaceId: 'ws_nowhere' }))).message).toBe('workspace ws_nowhere does not exist');
    let removed: string | undefined;
    for (const memberId of tenant.memberIds) {
      const events = await decoded(store, streams.member(workspaceId, memberId));
      if (events.some((event) => event.type === 'MemberRemoved')) removed = memberId;
    }
    expect(removed).toBeDefined();
    const message = (await rejection(actions.reactivateMember({ workspaceId, memberId: removed ?? '' }))).message;
    expect(message).toBe(`member ${removed ?? ''} was removed from workspace ${workspaceId}; a removed member cannot be reactivated`);
  });

  it('suspends and reactivates the tenant', async () => {
    const workspaceId = tenant.workspaceId;
    await expect(actions.suspendTenant({ workspaceId })).resolves.toEqual({ workspaceId, status: 'suspended' });
    expect((await rejection(actions.suspendTenant({ workspaceId }))).message).toBe(`workspace ${workspaceId} is already suspended`);
    await expect(actions.reactivateTenant({ workspaceId })).resolves.toEqual({ workspaceId, status: 'active' });
    const types = (await decoded(store, streams.workspace(workspaceId))).map((event) => event.type);
    expect(types).toEqual(['WorkspaceCreated', 'WorkspaceSuspended', 'WorkspaceReactivated']);
  });

  it('places an order with the next number and advances it one status at a time until it is closed', async () => {
    const workspaceId = tenant.workspaceId;
    const before = await ordersOf(store, workspaceId);
    const placed = await actions.placeOrder({ workspaceId });
    expect(placed.number).toBe(Math.max(...before.map((order) => order.number)) + 1);
    const [submitted] = (await ordersOf(store, workspaceId)).filter((order) => order.orderId === placed.orderId);
    expect(submitted).toMatchObject({ status: 'submitted', version: 2, clinicId: tenant.clinicIds[0] });

    const seen: { status: OrderStatus; version: number }[] = [];
    for (let step = 0; step < 12; step += 1) {
      const advanced = await actions.advanceOrder({ workspaceId, orderId: placed.orderId });
      seen.push({ status: advanced.status, version: advanced.version });
      if (advanced.status === 'closed') break;
    }
    const path = seen.map((entry) => entry.status);
    expect(path.filter((status) => status !== 'pending_approval')).toEqual(['approved', 'allocated', 'picking', 'dispatched', 'delivered', 'received', 'closed']);
    expect(seen.map((entry) => entry.version)).toEqual(seen.map((_, i) => 3 + i));
    expect((await rejection(actions.advanceOrder({ workspaceId, orderId: placed.orderId }))).message).toBe(
      `order ${placed.orderId} is closed; it cannot advance any further`,
    );

    const [closed] = (await ordersOf(store, workspaceId)).filter((order) => order.orderId === placed.orderId);
    for (const allocation of closed?.allocations ?? []) {
      const events = await decoded(store, streams.box(workspaceId, allocation.boxId));
      const mine = events.flatMap((event) => (event.type === 'StockMovementRecorded' && event.data.correlationId === placed.orderId ? [event.data] : []));
      expect(mine.map((m) => [m.type, m.quantityDelta, m.reservedDelta])).toEqual([
        ['reserve', 0, allocation.quantity],
        ['issue', -allocation.quantity, -allocation.quantity],
      ]);
    }
    const received = await store.streamNames(streamNamePrefix('box', workspaceId));
    let arrived = 0;
    for (const name of received) {
      const [registered] = await decoded(store, name);
      if (registered?.type === 'BoxRegistered' && registered.data.origin.reference === placed.orderId) arrived += 1;
    }
    expect(arrived).toBe(closed?.allocations.length);
  });

  it('takes an order out of a delivery exception to delivered, and closes a partial receipt', async () => {
    const workspaceId = tenant.workspaceId;
    const orders = await ordersOf(store, workspaceId);
    const inException = orders.find((order) => order.status === 'exception');
    const partial = orders.find((order) => order.status === 'partially_fulfilled');
    const pending = orders.find((order) => order.status === 'pending_approval');
    if (inException === undefined || partial === undefined || pending === undefined) throw new Error('the seed leaves these statuses open');
    await expect(actions.advanceOrder({ workspaceId, orderId: inException.orderId })).resolves.toEqual({
      orderId: inException.orderId,
      status: 'delivered',
      version: inException.version + 2,
    });
    await expect(actions.advanceOrder({ workspaceId, orderId: partial.orderId })).resolves.toEqual({
      orderId: partial.orderId,
      status: 'closed',
      version: partial.version + 1,
    });
    await expect(actions.advanceOrder({ workspaceId, orderId: pending.orderId })).resolves.toEqual({
      orderId: pending.orderId,
      status: 'approved',
      version: pending.version + 1,
    });
    const [approved] = (await ordersOf(store, workspaceId)).filter((order) => order.orderId === pending.orderId);
    const stages = approved?.approvalPlan?.steps.map((step) => step.stage) ?? [];
    expect([...new Set(approved?.grants.map((grant) => grant.stage))]).toEqual(stages);
    expect(approved?.grants.every((grant) => grant.approverId !== approved.requesterId)).toBe(true);
  });

  it('explains what stops an order: a terminal status, an unknown order, no stock to allocate', async () => {
    const workspaceId = tenant.workspaceId;
    const rejected = (await ordersOf(store, workspaceId)).find((order) => order.status === 'rejected');
    expect((await rejection(actions.advanceOrder({ workspaceId, orderId: rejected?.orderId ?? '' }))).message).toBe(
      `order ${rejected?.orderId ?? ''} is rejected; it cannot advance any further`,
    );
    expect((await rejection(actions.advanceOrder({ workspaceId, orderId: 'ord_unknown' }))).message).toBe(
      `order ord_unknown does not exist in workspace ${workspaceId}`,
    );

    // An order for an item nobody stocks (the inactive latex gloves of the catalogue).
    const items = await Promise.all(tenant.itemIds.map(async (itemId) => (await decoded(store, streams.item(workspaceId, itemId)))[0]));
    const unstocked = items.find((event) => event?.type === 'CatalogItemDefined' && event.data.status === 'inactive');
    if (unstocked?.type !== 'CatalogItemDefined') throw new Error('the catalogue has an inactive item');
    const orderId = 'ord_consoletestnostock';
    const destination = tenant.warehouseIds[tenant.warehouseIds.length - 1] ?? '';
    await store.append(
      streams.order(workspaceId, orderId),
      [
        newEvent(
          'OrderDrafted',
          {
            orderId,
            number: 9_999,
            type: 'general',
            requesterId: tenant.memberIds[0] ?? '',
            clinicId: tenant.clinicIds[0] ?? '',
            destinationWarehouseId: destination,
            lines: [
              {
                lineId: 'lin_nostock',
                catalogItemId: unstocked.data.itemId,
                sku: unstocked.data.sku,
                name: unstocked.data.name,
                requestedQty: 3,
                unitOfMeasure: unstocked.data.unitOfMeasure,
                categoryId: unstocked.data.categoryId,
                highValue: false,
              },
            ],
            lineCount: 1,
          },
          { eventId: '7d0c1a52-5f0e-4c55-9a55-0b3c51a0c001', tenantId: workspaceId, occurredAt: '2025-11-22T09:00:00.000Z' },
        ),
      ],
      'no_stream',
    );
    let status: OrderStatus = 'draft';
    while (status !== 'approved') status = (await actions.advanceOrder({ workspaceId, orderId })).status;
    expect((await rejection(actions.advanceOrder({ workspaceId, orderId }))).message).toBe(
      `no stock of ${unstocked.data.sku} (${unstocked.data.name}) is available in workspace ${workspaceId} to allocate order ${orderId}`,
    );
  });
});

describe.runIf(services.postgres)('seeding Postgres', () => {
  const twoTenants: HistoryParams = { seed: 'twice', tenants: 2, days: 20, scale: 'small', asOf: '2025-11-22T00:00:00.000Z' };
  let first: Opened | undefined;
  let second: Opened | undefined;

  beforeAll(async () => {
    [first, second] = await Promise.all([openStore(), openStore()]);
  });

  afterAll(async () => {
    await Promise.all([closeStore(first), closeStore(second)]);
  });

  /**
   * The whole log in log order. Readers stop at the cluster-wide horizon, which a transaction of a
   * test running beside this one may hold back for a moment: wait until the head counts them all.
   */
  async function everything(store: EventStore, expected: number): Promise<unknown[]> {
    await eventually(async () => expect(Number((await store.head()).eventCount)).toBeGreaterThanOrEqual(expected));
    const found: unknown[] = [];
    let from = logStart;
    for (;;) {
      const page = await store.readAll(from, 5_000);
      if (page.events.length === 0) break;
      for (const event of page.events) {
        found.push({
          streamName: event.streamName,
          streamRevision: event.streamRevision,
          eventId: event.eventId,
          type: event.type,
          tenantId: event.tenantId,
          data: event.data,
          occurredAt: event.occurredAt,
        });
      }
      from = page.next;
    }
    return found;
  }

  it('writes identical streams into two empty stores for the same seed, and refuses a second seeding', async () => {
    if (first === undefined || second === undefined) throw new Error('stores are open');
    const [summaryA, summaryB] = await Promise.all([seed({ eventStore: first.store, params: twoTenants }), seed({ eventStore: second.store, params: twoTenants })]);
    expect(summaryB).toEqual(summaryA);
    const generated = [...generateHistory(twoTenants)].reduce((sum, write) => sum + write.events.length, 0);
    const [a, b] = await Promise.all([everything(first.store, generated), everything(second.store, generated)]);
    expect(a.length).toBe(generated);
    expect(a.length).toBeGreaterThan(5_000);
    expect(b).toEqual(a);
    expect((await first.store.streamNames('supply.')).length).toBe((await second.store.streamNames('supply.')).length);

    const again = await rejection(seed({ eventStore: first.store, params: twoTenants }));
    expect(again.message).toBe(`workspace ${summaryA.tenants[0]?.workspaceId ?? ''} is already seeded; use another --seed or an empty store`);
  });
});
