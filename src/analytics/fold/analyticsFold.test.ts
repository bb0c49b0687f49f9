import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { logStart, type EventStore, type LogPosition, type RecordedEvent } from '../../eventStore/eventStore.js';
import { newEvent, type EventData, type EventEnvelope, type EventType } from '../../events/index.js';
import type { MetricResult } from '../results.js';
import type { AnalyticsCaps } from '../../config/analyticsCaps.js';
import { createAnalyticsFoldState, foldEvent, type AnalyticsFoldState } from './analyticsFold.js';
import { createFoldComputer } from './foldComputer.js';
import { foldTenantLog } from '../../reporting/foldTenantLog.js';

const tenant = 'ten_1';
const caps: AnalyticsCaps = { counts: 100, backlog: 100, trend: 100, exceptions: 100, comparison: 100 };
const asOf = '2026-11-10T12:00:00.000Z';

function ev<T extends EventType>(type: T, data: EventData<T>, occurredAt: string, tenantId = tenant): EventEnvelope {
  return newEvent(type, data, { eventId: randomUUID(), tenantId, occurredAt });
}

function fold(events: readonly EventEnvelope[]): AnalyticsFoldState {
  const state = createAnalyticsFoldState(tenant);
  for (const event of events) foldEvent(state, event);
  return state;
}

function computer(events: readonly EventEnvelope[]) {
  return createFoldComputer(fold(events), tenant);
}

// ── Event builders ──
const t = (day: number, hour = 0, minute = 0) => new Date(Date.UTC(2026, 10, day, hour, minute)).toISOString();

function item(itemId: string, at: string, over: Partial<EventData<'CatalogItemDefined'>> = {}) {
  return ev(
    'CatalogItemDefined',
    {
      itemId,
      sku: `SKU-${itemId}`,
      name: `Item ${itemId}`,
      categoryId: 'cat_1',
      unitOfMeasure: 'unit',
      packaging: '',
      criticality: 'low',
      tracksLot: false,
      tracksSerial: false,
      tracksExpiry: false,
      highValue: false,
      reorderPoint: 10,
      status: 'active',
      ...over,
    },
    at,
  );
}
const warehouse = (warehouseId: string, at: string, status: 'active' | 'inactive' | 'closed' = 'active') =>
  ev('WarehouseOpened', { warehouseId, name: `Warehouse ${warehouseId}`, kind: 'central', status }, at);
function box(boxId: string, itemId: string, warehouseId: string, at: string, over: Partial<EventData<'BoxRegistered'>> = {}) {
  return ev('BoxRegistered', { boxId, code: boxId, catalogItemId: itemId, warehouseId, status: 'active', origin: { type: 'purchase' }, ...over }, at);
}
function move(
  type: EventData<'StockMovementRecorded'>['type'],
  boxId: string,
  itemId: string,
  quantityDelta: number,
  at: string,
  over: Partial<EventData<'StockMovementRecorded'>> = {},
) {
  return ev('StockMovementRecorded', { movementId: randomUUID(), type, boxId, catalogItemId: itemId, quantityDelta, actorId: 'mem_1', occurredAt: at, ...over }, at);
}
const boxStatus = (boxId: string, status: EventData<'BoxStatusChanged'>['status'], at: string) => ev('BoxStatusChanged', { boxId, status }, at);
function draft(orderId: string, number: number, clinicId: string, at: string) {
  return ev(
    'OrderDrafted',
    {
      orderId,
      number,
      type: 'general',
      requesterId: 'mem_1',
      clinicId,
      destinationWarehouseId: 'wh_1',
      lines: [{ lineId: 'l1', catalogItemId: 'itm_1', sku: 'S', name: 'N', requestedQty: 1, unitOfMeasure: 'unit', categoryId: 'cat_1', highValue: false }],
    },
    at,
  );
}
const submit = (orderId: string, at: string) =>
  ev('OrderSubmitted', { orderId, submittedBy: 'mem_1', approvalPlan: { policyVersion: 1, requiresApproval: true, steps: [] } }, at);
const requestApproval = (orderId: string, at: string, stage = 'lead') => ev('OrderApprovalRequested', { orderId, stage }, at);
const approve = (orderId: string, at: string) => ev('OrderApproved', { orderId }, at);
const dispatch = (orderId: string, at: string) =>
  ev(
    'FulfillmentDispatched',
    { orderId, fulfillmentId: `ful_${orderId}`, sourceWarehouseId: 'wh_1', destinationWarehouseId: 'wh_2', dispatchedBy: 'mem_1', boxIds: ['box_x'] },
    at,
  );
const deliver = (orderId: string, at: string) => ev('FulfillmentDelivered', { orderId, deliveredBy: 'mem_1', receivedBy: 'mem_2', deliveredAt: at }, at);
function receive(orderId: string, at: string, discrepancies: EventData<'FulfillmentReceived'>['discrepancies'] = []) {
  return ev('FulfillmentReceived', { orderId, receivedBy: 'mem_2', receivedAt: at, lines: [], discrepancies }, at);
}
const close = (orderId: string, at: string) => ev('FulfillmentClosed', { orderId, closedBy: 'mem_1', outcome: 'complete' }, at);
const raise = (orderId: string, exceptionId: string, at: string) =>
  ev('DeliveryExceptionRaised', { orderId, exceptionId, reasonCode: 'delayed', description: 'late', reportedBy: 'mem_1' }, at);
const resolve = (orderId: string, exceptionId: string, at: string) =>
  ev('DeliveryExceptionResolved', { orderId, exceptionId, resolution: 'redelivered', resolvedBy: 'mem_1' }, at);
const clinic = (clinicId: string, name: string, at: string, tenantId = tenant) => ev('ClinicOpened', { clinicId, name, status: 'active' }, at, tenantId);

const counted = (metric: MetricResult['metric'], value: number, truncated = false): MetricResult => ({
  metric,
  value,
  unit: 'count',
  breakdown: [],
  truncated,
});

// ── LOW_STOCK ──
describe('low stock', () => {
  const base = [item('itm_1', t(1)), warehouse('wh_1', t(1))];

  test('a pair becomes low when registered empty, stops when stocked, and is low again with the new time', async () => {
    const events = [...base, box('box_1', 'itm_1', 'wh_1', t(2)), move('receive', 'box_1', 'itm_1', 20, t(3))];
    expect(await computer(events).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));

    const again = [...events, move('consume', 'box_1', 'itm_1', -12, t(4)), move('consume', 'box_1', 'itm_1', -1, t(5))];
    const c = computer(again);
    expect(await c.metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 1));
    expect(await c.exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [
        {
          metric: 'LOW_STOCK',
          priority: 55,
          drillDownType: 'catalog_item',
          drillDownId: 'itm_1',
          detectedAt: t(4),
          reference: { catalogItemId: 'itm_1', warehouseId: 'wh_1', available: 7, reorderPoint: 10, unitOfMeasure: 'unit' },
        },
      ],
    });
  });

  test('registered empty is a stock-out detected at registration; available 9 of 10 is low, 10 is not', async () => {
    const empty = computer([...base, box('box_1', 'itm_1', 'wh_1', t(2))]);
    expect((await empty.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([
      { priority: 65, detectedAt: t(2), reference: { available: 0 } },
    ]);
    const nine = computer([...base, box('box_1', 'itm_1', 'wh_1', t(2)), move('receive', 'box_1', 'itm_1', 9, t(3))]);
    expect((await nine.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ priority: 55, detectedAt: t(2), reference: { available: 9 } }]);
    const ten = computer([...base, box('box_1', 'itm_1', 'wh_1', t(2)), move('receive', 'box_1', 'itm_1', 10, t(3))]);
    expect(await ten.metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
  });

  test('reserved stock and boxes that are not active do not count as available', async () => {
    const events = [
      ...base,
      box('box_1', 'itm_1', 'wh_1', t(2)),
      move('receive', 'box_1', 'itm_1', 15, t(2, 1)),
      box('box_2', 'itm_1', 'wh_1', t(2, 2)),
      move('receive', 'box_2', 'itm_1', 50, t(2, 3)),
      boxStatus('box_2', 'quarantined', t(3)),
      move('reserve', 'box_1', 'itm_1', 0, t(4), { reservedDelta: 6 }),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(4), reference: { available: 9 } }]);
    const released = computer([...events, boxStatus('box_2', 'active', t(5))]);
    expect(await released.metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
  });

  test('item and warehouse must both be active; the level is low from the event that made them so', async () => {
    const noWarehouse = [item('itm_1', t(1)), box('box_1', 'itm_1', 'wh_1', t(2))];
    expect(await computer(noWarehouse).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
    const opened = [...noWarehouse, warehouse('wh_1', t(3))];
    expect((await computer(opened).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(3) }]);
    const closed = [...opened, ev('WarehouseStatusChanged', { warehouseId: 'wh_1', status: 'closed' }, t(4))];
    expect(await computer(closed).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
    const inactiveItem = [...opened, ev('CatalogItemStatusChanged', { itemId: 'itm_1', status: 'inactive' }, t(4))];
    expect(await computer(inactiveItem).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
    const reactivated = [...inactiveItem, ev('CatalogItemStatusChanged', { itemId: 'itm_1', status: 'active' }, t(5))];
    expect((await computer(reactivated).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(5) }]);
    const undefinedItem = [warehouse('wh_1', t(1)), box('box_1', 'itm_9', 'wh_1', t(2))];
    expect(await computer(undefinedItem).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
  });

  test('detectedAt stays while low; a revised reorder point re-evaluates every level of the item', async () => {
    const events = [
      ...base,
      warehouse('wh_2', t(1)),
      box('box_1', 'itm_1', 'wh_1', t(2)),
      move('receive', 'box_1', 'itm_1', 5, t(3)),
      move('consume', 'box_1', 'itm_1', -1, t(4)),
      box('box_2', 'itm_1', 'wh_2', t(5)),
      move('receive', 'box_2', 'itm_1', 12, t(5, 1)),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(2), reference: { warehouseId: 'wh_1', available: 4 } }]);
    const revised = [...events, ev('CatalogItemRevised', { itemId: 'itm_1', reorderPoint: 13, unitOfMeasure: 'box' }, t(6))];
    expect((await computer(revised).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([
      { detectedAt: t(2), reference: { warehouseId: 'wh_1', available: 4, reorderPoint: 13, unitOfMeasure: 'box' } },
      { detectedAt: t(6), reference: { warehouseId: 'wh_2', available: 12, reorderPoint: 13, unitOfMeasure: 'box' } },
    ]);
  });

  test('a transfer moves the box from one level to the other and re-evaluates both', async () => {
    const events = [
      ...base,
      warehouse('wh_2', t(1)),
      box('box_1', 'itm_1', 'wh_1', t(2)),
      move('receive', 'box_1', 'itm_1', 30, t(2, 1)),
      move('transfer', 'box_1', 'itm_1', 0, t(3), { fromWarehouseId: 'wh_1', toWarehouseId: 'wh_2' }),
    ];
    const result = await computer(events).exceptions({ cap: 10 }, asOf);
    expect(result.exceptions).toEqual([
      {
        metric: 'LOW_STOCK',
        priority: 65,
        drillDownType: 'catalog_item',
        drillDownId: 'itm_1',
        detectedAt: t(3),
        reference: { catalogItemId: 'itm_1', warehouseId: 'wh_1', available: 0, reorderPoint: 10, unitOfMeasure: 'unit' },
      },
    ]);
    // An issue naming warehouses does not move the box.
    const issued = [...events, move('issue', 'box_1', 'itm_1', -25, t(4), { fromWarehouseId: 'wh_2', toWarehouseId: 'wh_1' })];
    expect((await computer(issued).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([
      { detectedAt: t(3), reference: { warehouseId: 'wh_1', available: 0 } },
      { detectedAt: t(4), reference: { warehouseId: 'wh_2', available: 5 } },
    ]);
  });

  test('counts are capped', async () => {
    const events = [...base, warehouse('wh_2', t(1)), box('box_1', 'itm_1', 'wh_1', t(2)), box('box_2', 'itm_1', 'wh_2', t(2))];
    const c = computer(events);
    expect(await c.metric('LOW_STOCK', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(counted('LOW_STOCK', 1, true));
    expect(await c.metric('LOW_STOCK', { caps: { ...caps, counts: 2 } }, asOf)).toEqual(counted('LOW_STOCK', 2));
  });
});

// ── EXPIRING_STOCK ──
describe('expiring stock', () => {
  // asOf 2026-11-10: horizon 2026-12-10; within 7 days up to 2026-11-17.
  const withBox = (boxId: string, expiresOn: string | undefined, onHand = 3, itemId = 'itm_1') => [
    box(boxId, itemId, 'wh_1', t(1), expiresOn === undefined ? {} : { expiresOn }),
    move('receive', boxId, itemId, onHand, t(1, 1)),
  ];
  const base = [item('itm_1', t(1), { unitOfMeasure: 'box', reorderPoint: 0 }), warehouse('wh_1', t(1))];

  test('the horizon, the priorities and the detection time', async () => {
    const events = [
      ...base,
      ...withBox('box_a', '2026-12-10'),
      ...withBox('box_b', '2026-12-11'),
      ...withBox('box_c', '2026-11-09'),
      ...withBox('box_d', '2026-11-10'),
      ...withBox('box_e', '2026-11-17'),
      ...withBox('box_f', '2026-11-18'),
      ...withBox('box_g', undefined),
    ];
    const c = computer(events);
    expect(await c.metric('EXPIRING_STOCK', { caps }, asOf)).toEqual(counted('EXPIRING_STOCK', 5));
    const result = await c.exceptions({ cap: 10 }, asOf);
    expect(result.exceptions.map((e) => [e.drillDownId, e.priority, e.detectedAt])).toEqual([
      ['box_c', 80, '2026-10-10T00:00:00.000Z'],
      ['box_d', 70, '2026-10-11T00:00:00.000Z'],
      ['box_e', 70, '2026-10-18T00:00:00.000Z'],
      ['box_f', 45, '2026-10-19T00:00:00.000Z'],
      ['box_a', 45, '2026-11-10T00:00:00.000Z'],
    ]);
    expect(result.exceptions[0]).toEqual({
      metric: 'EXPIRING_STOCK',
      priority: 80,
      drillDownType: 'box',
      drillDownId: 'box_c',
      detectedAt: '2026-10-10T00:00:00.000Z',
      reference: { boxId: 'box_c', catalogItemId: 'itm_1', warehouseId: 'wh_1', expiresOn: '2026-11-09', onHand: 3, unitOfMeasure: 'box' },
    });
    // asOf late in the day: the horizon is by UTC date.
    expect(await c.metric('EXPIRING_STOCK', { caps }, '2026-11-11T23:59:59.999Z')).toEqual(counted('EXPIRING_STOCK', 6));
  });

  test('empty, depleted and disposed boxes do not count; quarantined and expired ones do', async () => {
    const events = [
      ...base,
      ...withBox('box_empty', '2026-11-20', 0),
      ...withBox('box_dep', '2026-11-20'),
      boxStatus('box_dep', 'depleted', t(2)),
      ...withBox('box_dis', '2026-11-20'),
      boxStatus('box_dis', 'disposed', t(2)),
      ...withBox('box_q', '2026-11-20'),
      boxStatus('box_q', 'quarantined', t(2)),
      ...withBox('box_x', '2026-11-01'),
      boxStatus('box_x', 'expired', t(2)),
      ...withBox('box_used', '2026-11-20'),
      move('consume', 'box_used', 'itm_1', -3, t(3)),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions.map((e) => e.drillDownId)).toEqual(['box_x', 'box_q']);
  });

  test('the unit is the item current one, empty when the item is unknown; catalogItemId narrows', async () => {
    const events = [
      ...base,
      ...withBox('box_1', '2026-11-20'),
      ...withBox('box_2', '2026-11-20', 2, 'itm_unknown'),
      ev('CatalogItemRevised', { itemId: 'itm_1', unitOfMeasure: 'pack' }, t(5)),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions.map((e) => [e.drillDownId, (e.reference as { unitOfMeasure: string }).unitOfMeasure])).toEqual([
      ['box_1', 'pack'],
      ['box_2', ''],
    ]);
    expect((await c.exceptions({ cap: 10, catalogItemId: 'itm_unknown' }, asOf)).exceptions.map((e) => e.drillDownId)).toEqual(['box_2']);
    expect(await c.metric('EXPIRING_STOCK', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(counted('EXPIRING_STOCK', 1, true));
  });
});

// ── Orders ──
describe('pending orders, approval backlog and clinics', () => {
  test('PENDING_ORDERS counts submitted to picking, never truncated', async () => {
    const events = [
      draft('ord_draft', 1, 'cli_1', t(1)),
      draft('ord_sub', 2, 'cli_1', t(1)),
      submit('ord_sub', t(2)),
      draft('ord_pend', 3, 'cli_1', t(1)),
      submit('ord_pend', t(2)),
      requestApproval('ord_pend', t(3)),
      draft('ord_pick', 4, 'cli_1', t(1)),
      submit('ord_pick', t(2)),
      approve('ord_pick', t(3)),
      ev('OrderAllocated', { orderId: 'ord_pick', sourceWarehouseId: 'wh_1', allocations: [{ lineId: 'l1', boxId: 'box_1', quantity: 1 }] }, t(3)),
      ev('OrderPickingStarted', { orderId: 'ord_pick', pickerId: 'mem_1' }, t(4)),
      draft('ord_disp', 5, 'cli_1', t(1)),
      submit('ord_disp', t(2)),
      approve('ord_disp', t(3)),
      dispatch('ord_disp', t(4)),
      draft('ord_rej', 6, 'cli_1', t(1)),
      submit('ord_rej', t(2)),
      ev('OrderRejected', { orderId: 'ord_rej', stage: 'lead', approverId: 'mem_2', reason: 'no' }, t(3)),
      // Events of an order never drafted are not folded.
      submit('ord_ghost', t(2)),
    ];
    expect(await computer(events).metric('PENDING_ORDERS', { caps: { ...caps, counts: 1 } }, asOf)).toEqual({
      metric: 'PENDING_ORDERS',
      value: 3,
      unit: 'orders',
      breakdown: [],
      truncated: false,
    });
  });

  const pendingAt = (orderId: string, number: number, since: string, clinicId = 'cli_1') => [
    draft(orderId, number, clinicId, t(1)),
    submit(orderId, t(1, 1)),
    requestApproval(orderId, since),
  ];
  const hours = (h: number, ms = 0) => new Date(Date.parse(asOf) - h * 3_600_000 - ms).toISOString();

  test('APPROVAL_BACKLOG bands at their edges', async () => {
    const events = [
      ...pendingAt('ord_a', 1, asOf),
      ...pendingAt('ord_b', 2, hours(24, -1)),
      ...pendingAt('ord_c', 3, hours(24)),
      ...pendingAt('ord_d', 4, hours(72, -1)),
      ...pendingAt('ord_e', 5, hours(72)),
      ...pendingAt('ord_f', 6, hours(168, -1)),
      ...pendingAt('ord_g', 7, hours(168)),
      ...pendingAt('ord_h', 8, hours(500)),
    ];
    expect(await computer(events).metric('APPROVAL_BACKLOG', { caps }, asOf)).toEqual({
      metric: 'APPROVAL_BACKLOG',
      value: 8,
      unit: 'orders',
      breakdown: [
        { dimension: 'under_24h', value: 2, unit: 'orders', minAgeHours: 0, maxAgeHours: 24 },
        { dimension: '24h_to_72h', value: 2, unit: 'orders', minAgeHours: 24, maxAgeHours: 72 },
        { dimension: '72h_to_168h', value: 2, unit: 'orders', minAgeHours: 72, maxAgeHours: 168 },
        { dimension: 'over_168h', value: 2, unit: 'orders', minAgeHours: 168, maxAgeHours: null },
      ],
      truncated: false,
    });
  });

  test('the clock starts when the order enters pending_approval; later stages do not restart it', async () => {
    const events = [
      ...pendingAt('ord_a', 1, hours(100)),
      ev('OrderApprovalGranted', { orderId: 'ord_a', stage: 'lead', approverId: 'mem_2' }, hours(90)),
      requestApproval('ord_a', hours(10), 'director'),
    ];
    const c = computer(events);
    expect((await c.metric('APPROVAL_BACKLOG', { caps }, asOf)).breakdown.map((row) => row.value)).toEqual([0, 0, 1, 0]);
    expect(await c.exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [
        {
          metric: 'APPROVAL_BACKLOG',
          priority: 40,
          drillDownType: 'order',
          drillDownId: 'ord_a',
          detectedAt: hours(100),
          reference: { orderId: 'ord_a', orderNumber: 1, clinicId: 'cli_1', band: '72h_to_168h' },
        },
      ],
    });
    // Leaving pending_approval and coming back restarts it.
    const back = [...events, approve('ord_a', hours(5)), requestApproval('ord_a', hours(2))];
    expect((await computer(back).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ priority: 30, detectedAt: hours(2), reference: { band: 'under_24h' } }]);
  });

  test('APPROVAL_BACKLOG reads the oldest first, ties by order id bytes, up to caps.backlog', async () => {
    const events = [...pendingAt('ord_b', 1, hours(30)), ...pendingAt('ORD_Z', 2, hours(30)), ...pendingAt('ord_c', 3, hours(200))];
    const c = computer(events);
    const capped = await c.metric('APPROVAL_BACKLOG', { caps: { ...caps, backlog: 2 } }, asOf);
    expect(capped.value).toBe(2);
    expect(capped.truncated).toBe(true);
    expect(capped.breakdown.map((row) => row.value)).toEqual([0, 1, 0, 1]);
    const exact = await c.metric('APPROVAL_BACKLOG', { caps: { ...caps, backlog: 3 } }, asOf);
    expect([exact.value, exact.truncated]).toEqual([3, false]);
    // The report orders by priority, then detectedAt, then id bytes ('O' before 'o').
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions.map((e) => e.drillDownId)).toEqual(['ord_c', 'ORD_Z', 'ord_b']);
  });

  test('the clinic comparison lists opened clinics in byte order with their order counts', async () => {
    const events = [
      draft('ord_1', 1, 'cli_b', t(1)),
      clinic('cli_b', 'Beta', t(2)),
      clinic('cli_a', 'Alpha', t(2)),
      clinic('CLI_Z', 'Zed', t(2)),
      draft('ord_2', 2, 'cli_b', t(3)),
      submit('ord_2', t(3)),
      requestApproval('ord_2', t(3)),
      draft('ord_3', 3, 'cli_never_opened', t(3)),
      ev('ClinicRenamed', { clinicId: 'cli_a', name: 'Alpha Prime' }, t(4)),
      ev('ClinicStatusChanged', { clinicId: 'cli_a', status: 'inactive' }, t(4)),
      ev('ClinicRenamed', { clinicId: 'cli_unknown', name: 'Nobody' }, t(4)),
    ];
    const c = computer(events);
    expect(await c.comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [
        { clinicId: 'CLI_Z', clinicName: 'Zed', clinicStatus: 'active', totalOrders: 0, pendingApprovalOrders: 0 },
        { clinicId: 'cli_a', clinicName: 'Alpha Prime', clinicStatus: 'inactive', totalOrders: 0, pendingApprovalOrders: 0 },
        { clinicId: 'cli_b', clinicName: 'Beta', clinicStatus: 'active', totalOrders: 2, pendingApprovalOrders: 1 },
      ],
    });
    const capped = await c.comparison({ cap: 2 });
    expect(capped.truncated).toBe(true);
    expect(capped.clinics.map((x) => x.clinicId)).toEqual(['CLI_Z', 'cli_a']);
    expect((await c.comparison({ cap: 3 })).truncated).toBe(false);
  });
});

// ── DELIVERY_EXCEPTIONS and RECEIPT_DISCREPANCIES ──
describe('delivery exceptions and receipt discrepancies', () => {
  const shipped = (orderId: string, number: number) => [draft(orderId, number, 'cli_1', t(1)), submit(orderId, t(1)), approve(orderId, t(1)), dispatch(orderId, t(2))];

  test('a delivery exception is open until resolved by its id', async () => {
    const events = [
      ...shipped('ord_1', 11),
      raise('ord_1', 'exc_1', t(3)),
      raise('ord_1', 'exc_2', t(4)),
      resolve('ord_1', 'exc_1', t(5)),
      ...shipped('ord_2', 12),
      raise('ord_2', 'exc_3', t(3)),
    ];
    const c = computer(events);
    expect(await c.metric('DELIVERY_EXCEPTIONS', { caps }, asOf)).toEqual(counted('DELIVERY_EXCEPTIONS', 2));
    expect(await c.metric('DELIVERY_EXCEPTIONS', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(counted('DELIVERY_EXCEPTIONS', 1, true));
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions).toEqual([
      {
        metric: 'DELIVERY_EXCEPTIONS',
        priority: 90,
        drillDownType: 'fulfillment',
        drillDownId: 'ord_2',
        detectedAt: t(3),
        reference: { orderId: 'ord_2', orderNumber: 12, exceptionId: 'exc_3', reasonCode: 'delayed' },
      },
      {
        metric: 'DELIVERY_EXCEPTIONS',
        priority: 90,
        drillDownType: 'fulfillment',
        drillDownId: 'ord_1',
        detectedAt: t(4),
        reference: { orderId: 'ord_1', orderNumber: 11, exceptionId: 'exc_2', reasonCode: 'delayed' },
      },
    ]);
  });

  test('the latest receipt discrepancies are open until the fulfillment closes', async () => {
    const short = { lineId: 'l1', catalogItemId: 'itm_1', expectedQty: 5, receivedQty: 3, reasonCode: 'short' } as const;
    const damaged = { lineId: 'l2', catalogItemId: 'itm_2', expectedQty: 2, receivedQty: 1, reasonCode: 'damaged' } as const;
    const first = [...shipped('ord_1', 7), deliver('ord_1', t(3)), receive('ord_1', t(4), [short, damaged])];
    expect(await computer(first).metric('RECEIPT_DISCREPANCIES', { caps }, asOf)).toEqual(counted('RECEIPT_DISCREPANCIES', 2));
    expect(await computer(first).metric('RECEIPT_DISCREPANCIES', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(
      counted('RECEIPT_DISCREPANCIES', 1, true),
    );
    const second = [...first, receive('ord_1', t(5), [damaged])];
    expect(await computer(second).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [
        {
          metric: 'RECEIPT_DISCREPANCIES',
          priority: 50,
          drillDownType: 'fulfillment',
          drillDownId: 'ord_1',
          detectedAt: t(5),
          reference: { orderId: 'ord_1', orderNumber: 7, lineId: 'l2', catalogItemId: 'itm_2', expectedQty: 2, receivedQty: 1, reasonCode: 'damaged' },
        },
      ],
    });
    const closed = [...second, close('ord_1', t(6))];
    expect(await computer(closed).metric('RECEIPT_DISCREPANCIES', { caps }, asOf)).toEqual(counted('RECEIPT_DISCREPANCIES', 0));
  });
});

// ── ORDER_CYCLE_TIME ──
describe('order cycle time', () => {
  const window = { from: '2026-11-03T00:00:00.000Z', to: '2026-11-05T00:00:00.000Z' };

  test('stage samples fall on the day of their `to` milestone; the window is [from, to)', async () => {
    const events = [
      // ord_1: every milestone; received 2026-11-04 (in the window).
      draft('ord_1', 1, 'cli_1', t(1)),
      submit('ord_1', t(1, 8)),
      approve('ord_1', t(1, 10)),
      dispatch('ord_1', t(2, 8)),
      deliver('ord_1', t(3, 8)),
      receive('ord_1', t(4, 8)),
      // Later repeats are no milestones.
      receive('ord_1', t(4, 20)),
      // ord_2: received 2026-11-03 00:00 (first instant of the window), no approval milestone.
      draft('ord_2', 2, 'cli_1', t(1)),
      submit('ord_2', t(2)),
      dispatch('ord_2', t(2, 12)),
      deliver('ord_2', t(2, 18)),
      receive('ord_2', t(3)),
      // ord_3: delivered on the window's `to` day: outside.
      draft('ord_3', 3, 'cli_1', t(1)),
      submit('ord_3', t(4)),
      approve('ord_3', t(4, 23, 59)),
      dispatch('ord_3', t(4, 23, 59)),
      deliver('ord_3', t(5)),
    ];
    const result = await computer(events).metric('ORDER_CYCLE_TIME', { window, caps }, asOf);
    // submitted_to_received: ord_1 72h, ord_2 24h → 48h.
    expect(result).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: 48,
      unit: 'hours',
      breakdown: [
        { dimension: 'submitted_to_approved', value: 23.98, unit: 'hours', samples: 1 },
        { dimension: 'approved_to_dispatched', value: 0, unit: 'hours', samples: 1 },
        { dimension: 'dispatched_to_delivered', value: 24, unit: 'hours', samples: 1 },
        { dimension: 'delivered_to_received', value: 15, unit: 'hours', samples: 2 },
      ],
      truncated: false,
    });
  });

  test('a stage whose `from` milestone comes later in the log has no sample; no samples is null', async () => {
    const events = [draft('ord_1', 1, 'cli_1', t(1)), approve('ord_1', t(3)), submit('ord_1', t(4)), approve('ord_1', t(4, 5))];
    expect(await computer(events).metric('ORDER_CYCLE_TIME', { window, caps }, asOf)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: null,
      unit: 'hours',
      breakdown: [
        { dimension: 'submitted_to_approved', value: null, unit: 'hours', samples: 0 },
        { dimension: 'approved_to_dispatched', value: null, unit: 'hours', samples: 0 },
        { dimension: 'dispatched_to_delivered', value: null, unit: 'hours', samples: 0 },
        { dimension: 'delivered_to_received', value: null, unit: 'hours', samples: 0 },
      ],
      truncated: false,
    });
  });
});

// ── CONSUMPTION_TREND and the trend ──
describe('consumption', () => {
  const window = { from: '2026-11-02T00:00:00.000Z', to: '2026-11-12T00:00:00.000Z' };
  const events = [
    // Consumed before the item is defined: not counted.
    move('consume', 'box_b', 'itm_b', -100, t(3)),
    item('itm_b', t(3, 1), { name: 'Burs' }),
    item('itm_a', t(1), { name: 'Alginate' }),
    warehouse('wh_1', t(1)),
    box('box_a', 'itm_a', 'wh_1', t(1)),
    move('receive', 'box_a', 'itm_a', 100, t(1)),
    // Out of the window (before from, on to).
    move('consume', 'box_a', 'itm_a', -1, t(1, 23, 59)),
    move('consume', 'box_a', 'itm_a', -1, t(12)),
    // In the window.
    move('consume', 'box_a', 'itm_a', -2, t(2)),
    move('consume', 'box_a', 'itm_a', -3, t(2, 23, 59)),
    move('return', 'box_a', 'itm_a', 1, t(3)),
    move('consume', 'box_a', 'itm_a', -4, t(9)),
    // Movement occurredAt decides the day, not the event time.
    ev('StockMovementRecorded', { movementId: 'mov_late', type: 'consume', boxId: 'box_a', catalogItemId: 'itm_a', quantityDelta: -5, actorId: 'mem_1', occurredAt: t(10) }, t(30)),
    ev('CatalogItemRevised', { itemId: 'itm_a', unitOfMeasure: 'box', name: 'Alginate XL' }, t(11)),
    move('consume', 'box_a', 'itm_a', -6, t(11, 5)),
    move('consume', 'box_b', 'itm_b', -7, t(4)),
  ];

  test('CONSUMPTION_TREND: movements in the window, quantity per item and unit with the current name', async () => {
    expect(await computer(events).metric('CONSUMPTION_TREND', { window, caps }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 6,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Alginate XL' },
        { dimension: 'itm_a', value: 14, unit: 'unit', name: 'Alginate XL' },
        { dimension: 'itm_b', value: 7, unit: 'unit', name: 'Burs' },
      ],
      truncated: false,
    });
  });

  test('CONSUMPTION_TREND reads the first caps.trend daily rows', async () => {
    const c = computer(events);
    // Rows: (a, box, 11), (a, unit, 02), (a, unit, 09), (a, unit, 10), (b, unit, 04).
    expect(await c.metric('CONSUMPTION_TREND', { window, caps: { ...caps, trend: 2 } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 3,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Alginate XL' },
        { dimension: 'itm_a', value: 5, unit: 'unit', name: 'Alginate XL' },
      ],
      truncated: true,
    });
    expect((await c.metric('CONSUMPTION_TREND', { window, caps: { ...caps, trend: 5 } }, asOf)).truncated).toBe(false);
    const empty = await c.metric('CONSUMPTION_TREND', { window: { from: '2026-12-01T00:00:00.000Z', to: '2026-12-02T00:00:00.000Z' }, caps }, asOf);
    expect(empty).toEqual({ metric: 'CONSUMPTION_TREND', value: 0, unit: 'movements', breakdown: [], truncated: false });
  });

  test('daily trend', async () => {
    expect(await computer(events).trend({ window, granularity: 'day', cap: 4 })).toEqual({
      granularity: 'day',
      truncated: true,
      series: [
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'box',
          points: [{ periodStart: '2026-11-11T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 6, movements: 1 }],
        },
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'unit',
          points: [
            { periodStart: '2026-11-02T00:00:00.000Z', periodEnd: '2026-11-03T00:00:00.000Z', quantity: 5, movements: 2 },
            { periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-10T00:00:00.000Z', quantity: 4, movements: 1 },
            { periodStart: '2026-11-10T00:00:00.000Z', periodEnd: '2026-11-11T00:00:00.000Z', quantity: 5, movements: 1 },
          ],
        },
      ],
    });
  });

  test('weekly trend: ISO weeks clipped to the window', async () => {
    // 2026-11-02 is a Monday; the window 2026-11-04 .. 2026-11-12 cuts weeks on both sides.
    const clipped = { from: '2026-11-04T00:00:00.000Z', to: '2026-11-12T00:00:00.000Z' };
    expect(await computer(events).trend({ window: clipped, granularity: 'week', cap: 10 })).toEqual({
      granularity: 'week',
      truncated: false,
      series: [
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'box',
          points: [{ periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 6, movements: 1 }],
        },
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'unit',
          points: [{ periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 9, movements: 2 }],
        },
        {
          catalogItemId: 'itm_b',
          name: 'Burs',
          unitOfMeasure: 'unit',
          points: [{ periodStart: '2026-11-04T00:00:00.000Z', periodEnd: '2026-11-09T00:00:00.000Z', quantity: 7, movements: 1 }],
        },
      ],
    });
    expect((await computer(events).trend({ window, granularity: 'week', cap: 10 })).series[1]?.points).toEqual([
      { periodStart: '2026-11-02T00:00:00.000Z', periodEnd: '2026-11-09T00:00:00.000Z', quantity: 5, movements: 2 },
      { periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 9, movements: 2 },
    ]);
  });
});

// ── The exceptions report ──
describe('exceptions report', () => {
  const events = [
    item('itm_1', t(1)),
    item('itm_2', t(1)),
    warehouse('wh_1', t(1)),
    box('box_1', 'itm_1', 'wh_1', t(2), { expiresOn: '2026-11-05' }),
    move('receive', 'box_1', 'itm_1', 3, t(2)),
    box('box_2', 'itm_2', 'wh_1', t(3), { expiresOn: '2026-11-05' }),
    move('receive', 'box_2', 'itm_2', 3, t(3)),
    draft('ord_1', 1, 'cli_1', t(1)),
    submit('ord_1', t(1)),
    requestApproval('ord_1', t(2)),
    draft('ord_2', 2, 'cli_1', t(1)),
    submit('ord_2', t(1)),
    approve('ord_2', t(1)),
    dispatch('ord_2', t(2)),
    raise('ord_2', 'exc_1', t(4)),
    raise('ord_2', 'exc_2', t(4)),
  ];

  test('sources merge in priority order', async () => {
    const result = await computer(events).exceptions({ cap: 10 }, asOf);
    expect(result.total).toBe(7);
    expect(result.truncated).toBe(false);
    expect(result.exceptions.map((e) => [e.metric, e.drillDownId, e.priority])).toEqual([
      ['DELIVERY_EXCEPTIONS', 'ord_2', 90],
      ['DELIVERY_EXCEPTIONS', 'ord_2', 90],
      ['EXPIRING_STOCK', 'box_1', 80],
      ['EXPIRING_STOCK', 'box_2', 80],
      ['LOW_STOCK', 'itm_1', 55],
      ['LOW_STOCK', 'itm_2', 55],
      ['APPROVAL_BACKLOG', 'ord_1', 40],
    ]);
  });

  test('each source gives its first cap+1; the report keeps cap', async () => {
    const result = await computer(events).exceptions({ cap: 1 }, asOf);
    // 2 + 2 + 2 + 0 + 1 kept of the sources.
    expect(result.total).toBe(7);
    expect(result.truncated).toBe(true);
    expect(result.exceptions).toEqual([
      {
        metric: 'DELIVERY_EXCEPTIONS',
        priority: 90,
        drillDownType: 'fulfillment',
        drillDownId: 'ord_2',
        detectedAt: t(4),
        reference: { orderId: 'ord_2', orderNumber: 2, exceptionId: 'exc_1', reasonCode: 'delayed' },
      },
    ]);
    const two = await computer([...events, raise('ord_2', 'exc_3', t(4))]).exceptions({ cap: 1 }, asOf);
    expect(two.total).toBe(7);
  });

  test('catalogItemId narrows the report to the low and expiring stock of that item', async () => {
    const result = await computer(events).exceptions({ cap: 10, catalogItemId: 'itm_2' }, asOf);
    expect(result.exceptions.map((e) => [e.metric, e.drillDownId])).toEqual([
      ['EXPIRING_STOCK', 'box_2'],
      ['LOW_STOCK', 'itm_2'],
    ]);
    expect(result.total).toBe(2);
  });
});

// ── Folding the log ──
function arrayEventStore(events: readonly { event: EventEnvelope; position: LogPosition }[], reads: { count: number }): EventStore {
  const recorded: RecordedEvent[] = events.map(({ event, position }, index) => ({
    position,
    streamName: `supply.test-${event.tenantId}`,
    streamRevision: BigInt(index),
    eventId: event.eventId,
    type: event.type,
    schemaVersion: event.schemaVersion,
    tenantId: event.tenantId,
    occurredAt: event.occurredAt,
    recordedAt: event.occurredAt,
    data: JSON.parse(JSON.stringify(event.data)) as unknown,
  }));
  const unsupported = (): never => {
    throw new Error('not in this test store');
  };
  const after = (a: LogPosition, b: LogPosition) => a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq);
  return {
    kind: 'postgres',
    readAll: async (from, maxCount) => {
      reads.count += 1;
      const rest = recorded.filter((event) => after(event.position, from));
      const page = rest.slice(0, maxCount);
      return { events: page, next: page.at(-1)?.position ?? from, atHead: rest.length <= maxCount };
    },
    append: unsupported,
    appendMany: unsupported,
    readStream: unsupported,
    subscribe: unsupported,
    head: unsupported,
    streamNames: unsupported,
    close: async () => undefined,
  };
}

describe('foldTenantLog', () => {
  const logged = (events: readonly EventEnvelope[]) => events.map((event, index) => ({ event, position: { tx: BigInt(10 + Math.floor(index / 2)), seq: BigInt(index + 1) } }));
  const unknownType = { ...ev('ClinicOpened', { clinicId: 'cli_x', name: 'X', status: 'active' }, t(1)), type: 'SomethingNew' } as unknown as EventEnvelope;
  const events = [
    clinic('cli_1', 'One', t(1)),
    clinic('cli_other', 'Other tenant', t(1), 'ten_2'),
    unknownType,
    draft('ord_1', 1, 'cli_1', t(2)),
    clinic('cli_2', 'Two', t(3), 'ten_2'),
    clinic('cli_3', 'Three', t(4)),
    draft('ord_2', 2, 'cli_1', t(5)),
  ];
  const log = logged(events);

  test('folds only the tenant events up to and including upTo, page by page, skipping unknown types', async () => {
    const reads = { count: 0 };
    const store = arrayEventStore(log, reads);
    const upTo = log[5]?.position ?? logStart;
    const progress: number[] = [];
    const state = await foldTenantLog(store, tenant, upTo, { pageSize: 2, onProgress: (n) => progress.push(n) });
    expect(progress).toEqual([2, 4, 6, 6]);
    expect(state.eventCount).toBe(3);
    expect(await createFoldComputer(state, tenant).comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [
        { clinicId: 'cli_1', clinicName: 'One', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 0 },
        { clinicId: 'cli_3', clinicName: 'Three', clinicStatus: 'active', totalOrders: 0, pendingApprovalOrders: 0 },
      ],
    });
    // Pages of 2: [0,1] [2,3] [4,5] [6 — past upTo].
    expect(reads.count).toBe(4);

    const other = await foldTenantLog(store, 'ten_2', { tx: 1000n, seq: 0n });
    expect(await createFoldComputer(other, 'ten_2').comparison({ cap: 10 })).toMatchObject({
      clinics: [{ clinicId: 'cli_2' }, { clinicId: 'cli_other' }],
    });
  });

  test('stops at the head and folds nothing before logStart', async () => {
    const reads = { count: 0 };
    const store = arrayEventStore(log, reads);
    const all = await foldTenantLog(store, tenant, { tx: 1000n, seq: 0n }, { pageSize: 100 });
    expect(all.eventCount).toBe(4);
    expect(reads.count).toBe(1);
    expect((await foldTenantLog(store, tenant, logStart)).eventCount).toBe(0);
    expect((await foldTenantLog(arrayEventStore([], reads), tenant, { tx: 1000n, seq: 0n })).eventCount).toBe(0);
  });

  test('a state is one tenant: another tenant event or computer is refused', () => {
    const state = createAnalyticsFoldState(tenant);
    expect(() => foldEvent(state, clinic('cli_1', 'X', t(1), 'ten_2'))).toThrow(/tenant/);
    expect(() => createFoldComputer(state, 'ten_2')).toThrow(/tenant/);
  });
});
