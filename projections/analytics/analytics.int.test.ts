import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventData, EventEnvelope } from '../../src/events/index.js';
import type { AnalyticsComputer } from '../../src/analytics/results.js';
import type { AnalyticsCaps } from '../../src/config/analyticsCaps.js';
import { createProjectionTestBed, event, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { analyticsProjection } from './projection.js';
import { createAnalyticsReader } from './queries.js';

/** 2026-11-`day` at hh:mm:ss.ms UTC (1 November 2026 is a Sunday, the 2nd a Monday). */
const at = (day: number, hour = 9, minute = 0, second = 0, ms = 0): string => new Date(Date.UTC(2026, 10, day, hour, minute, second, ms)).toISOString();

const caps: AnalyticsCaps = { counts: 100, backlog: 100, trend: 1000, exceptions: 100, comparison: 100 };
const asOf = at(10, 15);

type ItemFields = Partial<Pick<EventData<'CatalogItemDefined'>, 'name' | 'unitOfMeasure' | 'reorderPoint' | 'status'>>;
type Discrepancy = EventData<'FulfillmentReceived'>['discrepancies'][number];

/** Event builders for one tenant. */
function tenantEvents(tenantId: string) {
  const o = (occurredAt: string) => ({ tenantId, occurredAt });
  let movements = 0;
  const plan = { policyVersion: 1, requiresApproval: true, steps: [] };
  return {
    item: (itemId: string, when: string, fields: ItemFields = {}): EventEnvelope =>
      event(
        'CatalogItemDefined',
        {
          itemId,
          sku: itemId.toUpperCase(),
          name: fields.name ?? `Item ${itemId}`,
          categoryId: 'cat_consumables',
          unitOfMeasure: fields.unitOfMeasure ?? 'unit',
          packaging: 'box of 10',
          criticality: 'medium',
          tracksLot: false,
          tracksSerial: false,
          tracksExpiry: true,
          highValue: false,
          reorderPoint: fields.reorderPoint ?? 0,
          status: fields.status ?? 'active',
        },
        o(when),
      ),
    revise: (itemId: string, when: string, fields: Omit<ItemFields, 'status'>): EventEnvelope => event('CatalogItemRevised', { itemId, ...fields }, o(when)),
    itemStatus: (itemId: string, status: 'active' | 'inactive' | 'discontinued', when: string): EventEnvelope =>
      event('CatalogItemStatusChanged', { itemId, status }, o(when)),
    warehouse: (warehouseId: string, when: string, status: 'active' | 'inactive' | 'closed' = 'active'): EventEnvelope =>
      event('WarehouseOpened', { warehouseId, name: `Warehouse ${warehouseId}`, kind: 'central', status }, o(when)),
    warehouseStatus: (warehouseId: string, status: 'active' | 'inactive' | 'closed', when: string): EventEnvelope =>
      event('WarehouseStatusChanged', { warehouseId, status }, o(when)),
    clinic: (clinicId: string, name: string, when: string): EventEnvelope => event('ClinicOpened', { clinicId, name, status: 'active' }, o(when)),
    box: (boxId: string, catalogItemId: string, warehouseId: string, when: string, extra: Partial<EventData<'BoxRegistered'>> = {}): EventEnvelope =>
      event('BoxRegistered', { boxId, code: boxId.toUpperCase(), catalogItemId, warehouseId, status: 'active', origin: { type: 'purchase' }, ...extra }, o(when)),
    boxStatus: (boxId: string, status: EventData<'BoxStatusChanged'>['status'], when: string): EventEnvelope =>
      event('BoxStatusChanged', { boxId, status }, o(when)),
    move: (
      boxId: string,
      catalogItemId: string,
      type: EventData<'StockMovementRecorded'>['type'],
      quantityDelta: number,
      when: string,
      extra: Partial<EventData<'StockMovementRecorded'>> = {},
    ): EventEnvelope => {
      movements += 1;
      const data = { movementId: `mov_${movements}`, type, boxId, catalogItemId, quantityDelta, actorId: 'mem_1', occurredAt: when, ...extra };
      return event('StockMovementRecorded', data, o(extra.occurredAt === undefined ? when : at(20)));
    },
    drafted: (orderId: string, number: number, clinicId: string, when: string): EventEnvelope =>
      event(
        'OrderDrafted',
        {
          orderId,
          number,
          type: 'general',
          requesterId: 'mem_1',
          clinicId,
          destinationWarehouseId: 'wh_express',
          lines: [{ lineId: 'lin_1', catalogItemId: 'itm_x', sku: 'X', name: 'X', requestedQty: 1, unitOfMeasure: 'unit', categoryId: 'cat_x', highValue: false }],
        },
        o(when),
      ),
    submitted: (orderId: string, when: string): EventEnvelope => event('OrderSubmitted', { orderId, submittedBy: 'mem_1', approvalPlan: plan }, o(when)),
    requested: (orderId: string, when: string, stage = 'manager'): EventEnvelope => event('OrderApprovalRequested', { orderId, stage }, o(when)),
    approved: (orderId: string, when: string): EventEnvelope => event('OrderApproved', { orderId }, o(when)),
    rejected: (orderId: string, when: string): EventEnvelope => event('OrderRejected', { orderId, stage: 'manager', approverId: 'mem_2', reason: 'No' }, o(when)),
    cancelled: (orderId: string, when: string): EventEnvelope => event('OrderCancelled', { orderId, cancelledBy: 'mem_1' }, o(when)),
    allocated: (orderId: string, when: string): EventEnvelope =>
      event('OrderAllocated', { orderId, sourceWarehouseId: 'wh_central', allocations: [{ lineId: 'lin_1', boxId: 'box_x', quantity: 1 }] }, o(when)),
    picking: (orderId: string, when: string): EventEnvelope => event('OrderPickingStarted', { orderId, pickerId: 'mem_3' }, o(when)),
    dispatched: (orderId: string, when: string): EventEnvelope =>
      event(
        'FulfillmentDispatched',
        { orderId, fulfillmentId: `ful_${orderId}`, sourceWarehouseId: 'wh_central', destinationWarehouseId: 'wh_express', dispatchedBy: 'mem_3', boxIds: ['box_x'] },
        o(when),
      ),
    raised: (orderId: string, exceptionId: string, when: string, reasonCode: EventData<'DeliveryExceptionRaised'>['reasonCode'] = 'delayed'): EventEnvelope =>
      event('DeliveryExceptionRaised', { orderId, exceptionId, reasonCode, description: 'Late', reportedBy: 'crr_1' }, o(when)),
    resolved: (orderId: string, exceptionId: string, when: string): EventEnvelope =>
      event('DeliveryExceptionResolved', { orderId, exceptionId, resolution: 'redelivered', resolvedBy: 'mem_1' }, o(when)),
    delivered: (orderId: string, when: string): EventEnvelope => event('FulfillmentDelivered', { orderId, deliveredBy: 'crr_1', receivedBy: 'mem_1', deliveredAt: when }, o(when)),
    received: (orderId: string, when: string, discrepancies: Discrepancy[] = []): EventEnvelope =>
      event('FulfillmentReceived', { orderId, receivedBy: 'mem_1', receivedAt: when, lines: [], discrepancies }, o(when)),
    closed: (orderId: string, when: string): EventEnvelope => event('FulfillmentClosed', { orderId, closedBy: 'mem_1', outcome: 'partial' }, o(when)),
  };
}

/** An order drafted and submitted at clinic `cli_1`, then waiting for approval since `since`. */
function pendingOrder(e: ReturnType<typeof tenantEvents>, orderId: string, number: number, since: string): EventEnvelope[] {
  return [e.drafted(orderId, number, 'cli_1', at(1)), e.submitted(orderId, at(1, 10)), e.requested(orderId, since)];
}

const lowStockItem = (catalogItemId: string, warehouseId: string, available: number, reorderPoint: number, detectedAt: string, unitOfMeasure = 'unit') => ({
  metric: 'LOW_STOCK',
  priority: available <= 0 ? 65 : 55,
  drillDownType: 'catalog_item',
  drillDownId: catalogItemId,
  detectedAt,
  reference: { catalogItemId, warehouseId, available, reorderPoint, unitOfMeasure },
});

describe('analytics projection', () => {
  let bed: ProjectionTestBed;
  const reader = (tenantId: string): AnalyticsComputer => createAnalyticsReader(bed.pool, tenantId);
  const lowStock = async (tenantId: string) => (await reader(tenantId).exceptions({ catalogItemId: undefined, cap: 100 }, asOf)).exceptions;

  beforeAll(async () => {
    bed = await createProjectionTestBed([analyticsProjection]);
  });
  afterAll(async () => bed?.close());

  it('LOW_STOCK: low below the reorder point, a stock-out at 0, detectedAt kept while low and renewed after recovery', async () => {
    const tenantId = 'tenant-low';
    const e = tenantEvents(tenantId);
    await bed.project([
      e.item('itm_gloves', at(1, 8), { reorderPoint: 10, unitOfMeasure: 'box' }),
      e.warehouse('wh_a', at(1, 8)),
      e.box('box_1', 'itm_gloves', 'wh_a', at(1, 8, 1)),
      e.move('box_1', 'itm_gloves', 'receive', 10, at(1, 8, 2)),
    ]);
    // available 10 is not below 10.
    expect(await reader(tenantId).metric('LOW_STOCK', { caps }, asOf)).toEqual({ metric: 'LOW_STOCK', value: 0, unit: 'count', breakdown: [], truncated: false });

    await bed.project([e.move('box_1', 'itm_gloves', 'consume', -1, at(1, 8, 3)), e.move('box_1', 'itm_gloves', 'consume', -2, at(1, 8, 4))]);
    expect(await reader(tenantId).metric('LOW_STOCK', { caps }, asOf)).toEqual({ metric: 'LOW_STOCK', value: 1, unit: 'count', breakdown: [], truncated: false });
    expect(await reader(tenantId).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [lowStockItem('itm_gloves', 'wh_a', 7, 10, at(1, 8, 3), 'box')],
    });

    await bed.project([e.move('box_1', 'itm_gloves', 'receive', 5, at(1, 8, 5)), e.move('box_1', 'itm_gloves', 'consume', -12, at(1, 8, 6))], { batchSize: 1 });
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_gloves', 'wh_a', 0, 10, at(1, 8, 6), 'box')]);
  });

  it('LOW_STOCK: quarantined boxes and reserved quantities are not available', async () => {
    const tenantId = 'tenant-quarantine';
    const e = tenantEvents(tenantId);
    await bed.project([
      e.item('itm_q', at(1), { reorderPoint: 5 }),
      e.warehouse('wh_q', at(1)),
      e.box('box_q1', 'itm_q', 'wh_q', at(1)),
      e.move('box_q1', 'itm_q', 'receive', 8, at(1, 9, 1)),
      e.box('box_q2', 'itm_q', 'wh_q', at(1, 9, 2)),
      e.move('box_q2', 'itm_q', 'receive', 4, at(1, 9, 3)),
    ]);
    expect(await lowStock(tenantId)).toEqual([]);

    await bed.project([e.boxStatus('box_q1', 'quarantined', at(2)), e.move('box_q2', 'itm_q', 'reserve', 0, at(2, 10), { reservedDelta: 1 })]);
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_q', 'wh_q', 3, 5, at(2))]);

    await bed.project([e.boxStatus('box_q1', 'active', at(3))]);
    expect(await lowStock(tenantId)).toEqual([]);
  });

  it('LOW_STOCK: a transfer moves the box and its stock to the other warehouse; an issue does not move it', async () => {
    const tenantId = 'tenant-transfer';
    const e = tenantEvents(tenantId);
    await bed.project([
      e.item('itm_t', at(1), { reorderPoint: 3 }),
      e.warehouse('wh_a', at(1)),
      e.warehouse('wh_b', at(1)),
      e.box('box_t', 'itm_t', 'wh_a', at(1)),
      e.move('box_t', 'itm_t', 'receive', 5, at(1, 10)),
      e.move('box_t', 'itm_t', 'transfer', 0, at(2), { fromWarehouseId: 'wh_a', toWarehouseId: 'wh_b' }),
      e.move('box_t', 'itm_t', 'consume', -3, at(3)),
      e.move('box_t', 'itm_t', 'issue', -1, at(4), { fromWarehouseId: 'wh_b', toWarehouseId: 'wh_a' }),
    ]);
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_t', 'wh_a', 0, 3, at(2)), lowStockItem('itm_t', 'wh_b', 1, 3, at(3))]);
  });

  it('LOW_STOCK: follows reorder point revisions, item and warehouse status, and waits for the item and warehouse to exist', async () => {
    const tenantId = 'tenant-revise';
    const e = tenantEvents(tenantId);
    await bed.project([
      // Box first, item and warehouse later: the level is low once both are active.
      e.box('box_r', 'itm_r', 'wh_r', at(1)),
      e.move('box_r', 'itm_r', 'receive', 6, at(1, 10)),
      e.item('itm_r', at(1, 11), { reorderPoint: 10 }),
    ]);
    expect(await lowStock(tenantId)).toEqual([]);
    const steps: [EventEnvelope, ReturnType<typeof lowStockItem>[]][] = [
      [e.warehouse('wh_r', at(1, 12)), [lowStockItem('itm_r', 'wh_r', 6, 10, at(1, 12))]],
      [e.revise('itm_r', at(2, 10), { name: 'Renamed' }), [lowStockItem('itm_r', 'wh_r', 6, 10, at(1, 12))]],
      [e.revise('itm_r', at(3), { reorderPoint: 4 }), []],
      [e.revise('itm_r', at(4), { reorderPoint: 8, unitOfMeasure: 'pack' }), [lowStockItem('itm_r', 'wh_r', 6, 8, at(4), 'pack')]],
      [e.revise('itm_r', at(4, 10), { reorderPoint: 9 }), [lowStockItem('itm_r', 'wh_r', 6, 9, at(4), 'pack')]],
      [e.itemStatus('itm_r', 'inactive', at(5)), []],
      [e.itemStatus('itm_r', 'active', at(6)), [lowStockItem('itm_r', 'wh_r', 6, 9, at(6), 'pack')]],
      [e.warehouseStatus('wh_r', 'inactive', at(7)), []],
      [e.warehouseStatus('wh_r', 'active', at(8)), [lowStockItem('itm_r', 'wh_r', 6, 9, at(8), 'pack')]],
    ];
    for (const [given, expected] of steps) {
      await bed.project([given]);
      expect(await lowStock(tenantId), given.type).toEqual(expected);
    }
  });

  it('EXPIRING_STOCK: expiry up to asOf + 30 days, expired boxes included, empty, depleted and disposed boxes excluded', async () => {
    const tenantId = 'tenant-expiry';
    const e = tenantEvents(tenantId);
    const stocked = (boxId: string, expiresOn: string | undefined, quantity = 1): EventEnvelope[] => [
      e.box(boxId, 'itm_e', 'wh_e', at(1), expiresOn === undefined ? {} : { expiresOn }),
      ...(quantity === 0 ? [] : [e.move(boxId, 'itm_e', 'receive', quantity, at(1, 10))]),
    ];
    await bed.project([
      e.item('itm_e', at(1)),
      e.warehouse('wh_e', at(1)),
      ...stocked('box_past', '2026-11-09'),
      ...stocked('box_today', '2026-11-10'),
      ...stocked('box_week', '2026-11-17'),
      ...stocked('box_week_after', '2026-11-18'),
      ...stocked('box_horizon', '2026-12-10'),
      ...stocked('box_beyond', '2026-12-11'),
      ...stocked('box_depleted', '2026-11-12'),
      e.boxStatus('box_depleted', 'depleted', at(2)),
      ...stocked('box_disposed', '2026-11-12'),
      e.boxStatus('box_disposed', 'disposed', at(2)),
      ...stocked('box_empty', '2026-11-12', 0),
      ...stocked('box_used_up', '2026-11-12', 2),
      e.move('box_used_up', 'itm_e', 'consume', -2, at(3)),
      ...stocked('box_quarantined', '2026-11-12'),
      e.boxStatus('box_quarantined', 'quarantined', at(2)),
      ...stocked('box_expired', '2026-11-01', 3),
      e.boxStatus('box_expired', 'expired', at(2)),
      ...stocked('box_no_expiry', undefined),
    ]);
    expect(await reader(tenantId).metric('EXPIRING_STOCK', { caps }, asOf)).toEqual({ metric: 'EXPIRING_STOCK', value: 7, unit: 'count', breakdown: [], truncated: false });
    const expiring = (boxId: string, expiresOn: string, priority: number, detectedAt: string, onHand = 1) => ({
      metric: 'EXPIRING_STOCK',
      priority,
      drillDownType: 'box',
      drillDownId: boxId,
      detectedAt,
      reference: { boxId, catalogItemId: 'itm_e', warehouseId: 'wh_e', expiresOn, onHand, unitOfMeasure: 'unit' },
    });
    expect(await reader(tenantId).exceptions({ cap: 100 }, asOf)).toEqual({
      total: 7,
      truncated: false,
      exceptions: [
        expiring('box_expired', '2026-11-01', 80, '2026-10-02T00:00:00.000Z', 3),
        expiring('box_past', '2026-11-09', 80, '2026-10-10T00:00:00.000Z'),
        expiring('box_today', '2026-11-10', 70, '2026-10-11T00:00:00.000Z'),
        expiring('box_quarantined', '2026-11-12', 70, '2026-10-13T00:00:00.000Z'),
        expiring('box_week', '2026-11-17', 70, '2026-10-18T00:00:00.000Z'),
        expiring('box_week_after', '2026-11-18', 45, '2026-10-19T00:00:00.000Z'),
        expiring('box_horizon', '2026-12-10', 45, '2026-11-10T00:00:00.000Z'),
      ],
    });
    // One day later the horizon takes in the next day, whatever the time of day.
    expect((await reader(tenantId).metric('EXPIRING_STOCK', { caps }, at(11, 0))).value).toBe(8);
    expect((await reader(tenantId).metric('EXPIRING_STOCK', { caps: { ...caps, counts: 7 } }, asOf)).truncated).toBe(false);
    expect(await reader(tenantId).metric('EXPIRING_STOCK', { caps: { ...caps, counts: 6 } }, asOf)).toEqual({
      metric: 'EXPIRING_STOCK',
      value: 6,
      unit: 'count',
      breakdown: [],
      truncated: true,
    });
  });

  it('PENDING_ORDERS and the clinic comparison: counters by clinic, only opened clinics listed', async () => {
    const tenantId = 'tenant-clinics';
    const e = tenantEvents(tenantId);
    await bed.project([
      e.clinic('cli_b', 'Clinic B', at(1)),
      e.drafted('ord_1', 1, 'cli_a', at(1, 10)),
      e.drafted('ord_2', 2, 'cli_a', at(1, 10)),
      e.submitted('ord_2', at(1, 11)),
      e.drafted('ord_3', 3, 'cli_a', at(1, 10)),
      e.submitted('ord_3', at(1, 11)),
      e.requested('ord_3', at(1, 12)),
      e.drafted('ord_4', 4, 'cli_b', at(1, 10)),
      e.submitted('ord_4', at(1, 11)),
      e.approved('ord_4', at(1, 12)),
      e.allocated('ord_4', at(1, 13)),
      e.picking('ord_4', at(1, 14)),
    ]);
    expect(await reader(tenantId).metric('PENDING_ORDERS', { caps }, asOf)).toEqual({ metric: 'PENDING_ORDERS', value: 3, unit: 'orders', breakdown: [], truncated: false });
    expect(await reader(tenantId).comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [{ clinicId: 'cli_b', clinicName: 'Clinic B', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 0 }],
    });

    await bed.project(
      [
        e.dispatched('ord_4', at(2)),
        e.drafted('ord_5', 5, 'cli_b', at(2)),
        e.submitted('ord_5', at(2, 10)),
        e.cancelled('ord_5', at(2, 11)),
        e.drafted('ord_6', 6, 'cli_c', at(2)),
        e.submitted('ord_6', at(2, 10)),
        e.clinic('cli_a', 'Clinic A', at(3)),
        event('ClinicStatusChanged', { clinicId: 'cli_b', status: 'inactive' }, { tenantId, occurredAt: at(3) }),
        event('ClinicRenamed', { clinicId: 'cli_b', name: 'Clinic B North' }, { tenantId, occurredAt: at(3) }),
      ],
      { batchSize: 3 },
    );
    // ord_2 and ord_6 submitted, ord_3 pending approval; ord_4 dispatched, ord_5 cancelled, ord_1 a draft.
    expect((await reader(tenantId).metric('PENDING_ORDERS', { caps }, asOf)).value).toBe(3);
    expect(await reader(tenantId).comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [
        { clinicId: 'cli_a', clinicName: 'Clinic A', clinicStatus: 'active', totalOrders: 3, pendingApprovalOrders: 1 },
        { clinicId: 'cli_b', clinicName: 'Clinic B North', clinicStatus: 'inactive', totalOrders: 2, pendingApprovalOrders: 0 },
      ],
    });
    expect(await reader(tenantId).comparison({ cap: 1 })).toEqual({
      truncated: true,
      clinics: [{ clinicId: 'cli_a', clinicName: 'Clinic A', clinicStatus: 'active', totalOrders: 3, pendingApprovalOrders: 1 }],
    });
    expect(await reader(tenantId).comparison({ cap: 2 })).toMatchObject({ truncated: false });
  });

  it('APPROVAL_BACKLOG: bands by age at asOf with their edges, the clock kept across stages, capped oldest first', async () => {
    const tenantId = 'tenant-backlog';
    const e = tenantEvents(tenantId);
    const backlogAsOf = at(20, 12);
    await bed.project([
      ...pendingOrder(e, 'ord_b1', 1, at(19, 12, 0, 0, 1)),
      ...pendingOrder(e, 'ord_b2', 2, at(19, 12)),
      ...pendingOrder(e, 'ord_b3', 3, at(17, 12)),
      ...pendingOrder(e, 'ord_b4', 4, at(17, 12, 0, 0, 1)),
      ...pendingOrder(e, 'ord_b5', 5, at(13, 12)),
      ...pendingOrder(e, 'ord_b6', 6, at(10)),
      e.approved('ord_b6', at(19)),
      e.requested('ord_b6', at(19, 1), 'finance'),
      ...pendingOrder(e, 'ord_b7', 7, at(10)),
      e.requested('ord_b7', at(19), 'finance'),
      ...pendingOrder(e, 'ord_b8', 8, at(10)),
      e.rejected('ord_b8', at(11)),
      ...pendingOrder(e, 'ord_b9', 9, at(10)),
      e.approved('ord_b9', at(11)),
    ]);
    const bands = (under24: number, to72: number, to168: number, over168: number) => [
      { dimension: 'under_24h', value: under24, unit: 'orders', minAgeHours: 0, maxAgeHours: 24 },
      { dimension: '24h_to_72h', value: to72, unit: 'orders', minAgeHours: 24, maxAgeHours: 72 },
      { dimension: '72h_to_168h', value: to168, unit: 'orders', minAgeHours: 72, maxAgeHours: 168 },
      { dimension: 'over_168h', value: over168, unit: 'orders', minAgeHours: 168, maxAgeHours: null },
    ];
    // ord_b6 went back to pending approval at day 19 01:00 (from approved); ord_b7's second stage kept its day-10 clock.
    expect(await reader(tenantId).metric('APPROVAL_BACKLOG', { caps }, backlogAsOf)).toEqual({
      metric: 'APPROVAL_BACKLOG',
      value: 7,
      unit: 'orders',
      breakdown: bands(1, 3, 1, 2),
      truncated: false,
    });
    expect(await reader(tenantId).metric('APPROVAL_BACKLOG', { caps: { ...caps, backlog: 2 } }, backlogAsOf)).toEqual({
      metric: 'APPROVAL_BACKLOG',
      value: 2,
      unit: 'orders',
      breakdown: bands(0, 0, 0, 2),
      truncated: true,
    });
    const approval = (orderId: string, orderNumber: number, priority: number, detectedAt: string, band: string) => ({
      metric: 'APPROVAL_BACKLOG',
      priority,
      drillDownType: 'order',
      drillDownId: orderId,
      detectedAt,
      reference: { orderId, orderNumber, clinicId: 'cli_1', band },
    });
    expect(await reader(tenantId).exceptions({ cap: 100 }, backlogAsOf)).toEqual({
      total: 7,
      truncated: false,
      exceptions: [
        approval('ord_b7', 7, 40, at(10), 'over_168h'),
        approval('ord_b5', 5, 40, at(13, 12), 'over_168h'),
        approval('ord_b3', 3, 40, at(17, 12), '72h_to_168h'),
        approval('ord_b4', 4, 30, at(17, 12, 0, 0, 1), '24h_to_72h'),
        approval('ord_b6', 6, 30, at(19, 1), '24h_to_72h'),
        approval('ord_b2', 2, 30, at(19, 12), '24h_to_72h'),
        approval('ord_b1', 1, 30, at(19, 12, 0, 0, 1), 'under_24h'),
      ],
    });
  });

  it('ORDER_CYCLE_TIME: first milestones, samples on the day of the stage end, window from inclusive and to exclusive', async () => {
    const tenantId = 'tenant-cycle';
    const e = tenantEvents(tenantId);
    await bed.project([
      e.drafted('ord_c1', 1, 'cli_1', at(1, 9)),
      e.submitted('ord_c1', at(1, 10)),
      e.requested('ord_c1', at(1, 11)),
      e.approved('ord_c1', at(1, 12)),
      e.allocated('ord_c1', at(1, 13)),
      e.dispatched('ord_c1', at(2, 12)),
      e.raised('ord_c1', 'exc_1', at(2, 18)),
      e.resolved('ord_c1', 'exc_1', at(3, 8)),
      e.delivered('ord_c1', at(3, 12)),
      e.received('ord_c1', at(3, 15)),
      e.closed('ord_c1', at(3, 16)),
      e.drafted('ord_c2', 2, 'cli_1', at(2)),
      e.submitted('ord_c2', at(2, 0)),
      e.approved('ord_c2', at(2, 6, 20)),
      e.dispatched('ord_c2', at(4, 0)),
      // Approved without having been submitted: no submitted_to_approved sample, but its dispatch counts.
      e.drafted('ord_c3', 3, 'cli_1', at(2)),
      e.approved('ord_c3', at(2, 20)),
      e.dispatched('ord_c3', at(3, 0)),
    ]);
    const stages = (rows: [number | null, number][]) =>
      ['submitted_to_approved', 'approved_to_dispatched', 'dispatched_to_delivered', 'delivered_to_received'].map((dimension, index) => ({
        dimension,
        value: rows[index]?.[0] ?? null,
        unit: 'hours',
        samples: rows[index]?.[1] ?? 0,
      }));
    const cycle = (from: number, to: number) => reader(tenantId).metric('ORDER_CYCLE_TIME', { caps, window: { from: at(from, 0), to: at(to, 0) } }, asOf);
    expect(await cycle(1, 4)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: 53,
      unit: 'hours',
      // (2 + 6.333…) / 2 = 4.1666… → 4.17
      breakdown: stages([
        [4.17, 2],
        [14, 2],
        [24, 1],
        [3, 1],
      ]),
      truncated: false,
    });
    expect(await cycle(4, 5)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: null,
      unit: 'hours',
      breakdown: stages([
        [null, 0],
        [41.67, 1],
        [null, 0],
        [null, 0],
      ]),
      truncated: false,
    });
    expect(await cycle(2, 3)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: null,
      unit: 'hours',
      breakdown: stages([
        [6.33, 1],
        [24, 1],
        [null, 0],
        [null, 0],
      ]),
      truncated: false,
    });
    await expect(reader(tenantId).metric('ORDER_CYCLE_TIME', { caps }, asOf)).rejects.toThrow(/window/);
  });

  it('CONSUMPTION_TREND and the trend: consume movements by their own UTC day and the unit at projection time, not netted', async () => {
    const tenantId = 'tenant-consumption';
    const e = tenantEvents(tenantId);
    await bed.project([
      e.item('itm_a', at(1), { name: 'Nitrile gloves', unitOfMeasure: 'box' }),
      e.item('itm_b', at(1), { name: 'Gauze' }),
      e.warehouse('wh_c', at(1)),
      e.box('box_a', 'itm_a', 'wh_c', at(1)),
      e.box('box_b', 'itm_b', 'wh_c', at(1)),
      e.box('box_late', 'itm_late', 'wh_c', at(1)),
      e.move('box_a', 'itm_a', 'receive', 100, at(1, 10)),
      e.move('box_b', 'itm_b', 'receive', 100, at(1, 10)),
      e.move('box_late', 'itm_late', 'receive', 100, at(1, 10)),
      // Recorded on day 20, happened late on day 2: counts on day 2.
      e.move('box_a', 'itm_a', 'consume', -3, at(2, 23, 30), { occurredAt: at(2, 23, 30) }),
      e.move('box_a', 'itm_a', 'consume', -2, at(3, 1)),
      e.move('box_a', 'itm_a', 'consume', -1, at(3, 9)),
      e.move('box_a', 'itm_a', 'return', 1, at(3, 10)),
      e.move('box_a', 'itm_a', 'issue', -5, at(3, 11)),
      e.move('box_late', 'itm_late', 'consume', -7, at(3)),
      e.revise('itm_a', at(4), { unitOfMeasure: 'pack' }),
      e.move('box_a', 'itm_a', 'consume', -4, at(4, 10)),
      e.item('itm_late', at(5), { name: 'Late item' }),
      e.move('box_late', 'itm_late', 'consume', -1, at(5, 10)),
      e.move('box_b', 'itm_b', 'consume', -10, at(9)),
      e.move('box_b', 'itm_b', 'consume', -5, at(11)),
      e.revise('itm_a', at(12), { name: 'Nitrile gloves M' }),
    ]);
    expect(await reader(tenantId).metric('CONSUMPTION_TREND', { caps, window: { from: at(1, 0), to: at(8, 0) } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 5,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Nitrile gloves M' },
        { dimension: 'itm_a', value: 4, unit: 'pack', name: 'Nitrile gloves M' },
        { dimension: 'itm_late', value: 1, unit: 'unit', name: 'Late item' },
      ],
      truncated: false,
    });
    expect(await reader(tenantId).metric('CONSUMPTION_TREND', { caps, window: { from: at(12, 0), to: at(13, 0) } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 0,
      unit: 'movements',
      breakdown: [],
      truncated: false,
    });
    const point = (from: string, to: string, quantity: number, movements: number) => ({ periodStart: from, periodEnd: to, quantity, movements });
    expect(await reader(tenantId).trend({ window: { from: at(3, 0), to: at(11, 0) }, granularity: 'week', cap: 100 })).toEqual({
      granularity: 'week',
      truncated: false,
      series: [
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'box', points: [point(at(3, 0), at(9, 0), 3, 2)] },
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'pack', points: [point(at(3, 0), at(9, 0), 4, 1)] },
        { catalogItemId: 'itm_b', name: 'Gauze', unitOfMeasure: 'unit', points: [point(at(9, 0), at(11, 0), 10, 1)] },
        { catalogItemId: 'itm_late', name: 'Late item', unitOfMeasure: 'unit', points: [point(at(3, 0), at(9, 0), 1, 1)] },
      ],
    });
    expect(await reader(tenantId).trend({ window: { from: at(1, 0), to: at(12, 0) }, granularity: 'day', cap: 100 })).toEqual({
      granularity: 'day',
      truncated: false,
      series: [
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'box', points: [point(at(2, 0), at(3, 0), 3, 1), point(at(3, 0), at(4, 0), 3, 2)] },
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'pack', points: [point(at(4, 0), at(5, 0), 4, 1)] },
        { catalogItemId: 'itm_b', name: 'Gauze', unitOfMeasure: 'unit', points: [point(at(9, 0), at(10, 0), 10, 1), point(at(11, 0), at(12, 0), 5, 1)] },
        { catalogItemId: 'itm_late', name: 'Late item', unitOfMeasure: 'unit', points: [point(at(5, 0), at(6, 0), 1, 1)] },
      ],
    });
    // Caps count daily rows in (item, unit, day) order.
    expect(await reader(tenantId).trend({ window: { from: at(1, 0), to: at(12, 0) }, granularity: 'week', cap: 2 })).toEqual({
      granularity: 'week',
      truncated: true,
      series: [{ catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'box', points: [point(at(2, 0), at(9, 0), 6, 3)] }],
    });
    expect(await reader(tenantId).metric('CONSUMPTION_TREND', { caps: { ...caps, trend: 3 }, window: { from: at(1, 0), to: at(12, 0) } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 4,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Nitrile gloves M' },
        { dimension: 'itm_a', value: 4, unit: 'pack', name: 'Nitrile gloves M' },
      ],
      truncated: true,
    });
  });

  it('DELIVERY_EXCEPTIONS: open from raised until resolved, by detectedAt then order', async () => {
    const tenantId = 'tenant-delivery';
    const e = tenantEvents(tenantId);
    const shipped = (orderId: string, number: number) => [e.drafted(orderId, number, 'cli_1', at(1)), e.submitted(orderId, at(1)), e.approved(orderId, at(1)), e.dispatched(orderId, at(2))];
    await bed.project([
      ...shipped('ord_d2', 12),
      ...shipped('ord_d1', 11),
      e.raised('ord_d2', 'exc_1', at(3), 'damaged'),
      e.raised('ord_d1', 'exc_2', at(3)),
      e.raised('ord_d1', 'exc_3', at(3)),
    ]);
    const exception = (orderId: string, orderNumber: number, exceptionId: string, detectedAt: string, reasonCode = 'delayed') => ({
      metric: 'DELIVERY_EXCEPTIONS',
      priority: 90,
      drillDownType: 'fulfillment',
      drillDownId: orderId,
      detectedAt,
      reference: { orderId, orderNumber, exceptionId, reasonCode },
    });
    expect(await reader(tenantId).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 3,
      truncated: false,
      exceptions: [exception('ord_d1', 11, 'exc_2', at(3)), exception('ord_d1', 11, 'exc_3', at(3)), exception('ord_d2', 12, 'exc_1', at(3), 'damaged')],
    });
    await bed.project([e.resolved('ord_d1', 'exc_2', at(4)), e.raised('ord_d1', 'exc_4', at(4)), e.resolved('ord_d1', 'exc_4', at(4, 10)), e.raised('ord_d1', 'exc_5', at(5))]);
    expect(await reader(tenantId).metric('DELIVERY_EXCEPTIONS', { caps }, asOf)).toEqual({ metric: 'DELIVERY_EXCEPTIONS', value: 3, unit: 'count', breakdown: [], truncated: false });
    expect((await reader(tenantId).exceptions({ cap: 10 }, asOf)).exceptions).toEqual([
      exception('ord_d1', 11, 'exc_3', at(3)),
      exception('ord_d2', 12, 'exc_1', at(3), 'damaged'),
      exception('ord_d1', 11, 'exc_5', at(5)),
    ]);
    expect(await reader(tenantId).metric('DELIVERY_EXCEPTIONS', { caps: { ...caps, counts: 2 } }, asOf)).toEqual({
      metric: 'DELIVERY_EXCEPTIONS',
      value: 2,
      unit: 'count',
      breakdown: [],
      truncated: true,
    });
  });

  it('RECEIPT_DISCREPANCIES: a later receipt replaces the order’s discrepancies, closure removes them', async () => {
    const tenantId = 'tenant-receipt';
    const e = tenantEvents(tenantId);
    const short = (lineId: string, catalogItemId: string, expectedQty: number, receivedQty: number, reasonCode: Discrepancy['reasonCode'] = 'short'): Discrepancy => ({
      lineId,
      catalogItemId,
      expectedQty,
      receivedQty,
      reasonCode,
    });
    const delivered = (orderId: string, number: number) => [e.drafted(orderId, number, 'cli_1', at(1)), e.dispatched(orderId, at(2)), e.delivered(orderId, at(3))];
    await bed.project([
      ...delivered('ord_r1', 21),
      ...delivered('ord_r2', 22),
      ...delivered('ord_r3', 23),
      e.received('ord_r1', at(4), [short('lin_2', 'itm_b', 5, 4), short('lin_1', 'itm_a', 2, 0, 'damaged'), short('lin_1', 'itm_a', 2, 1)]),
      e.received('ord_r2', at(4), [short('lin_1', 'itm_c', 1, 0)]),
      e.received('ord_r3', at(4)),
    ]);
    const discrepancy = (orderId: string, orderNumber: number, d: Discrepancy, detectedAt: string) => ({
      metric: 'RECEIPT_DISCREPANCIES',
      priority: 50,
      drillDownType: 'fulfillment',
      drillDownId: orderId,
      detectedAt,
      reference: { orderId, orderNumber, ...d },
    });
    expect(await reader(tenantId).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 4,
      truncated: false,
      exceptions: [
        discrepancy('ord_r1', 21, short('lin_1', 'itm_a', 2, 0, 'damaged'), at(4)),
        discrepancy('ord_r1', 21, short('lin_1', 'itm_a', 2, 1), at(4)),
        discrepancy('ord_r1', 21, short('lin_2', 'itm_b', 5, 4), at(4)),
        discrepancy('ord_r2', 22, short('lin_1', 'itm_c', 1, 0), at(4)),
      ],
    });
    await bed.project([e.received('ord_r1', at(5), [short('lin_2', 'itm_b', 5, 3)]), e.closed('ord_r2', at(5))], { batchSize: 1 });
    expect(await reader(tenantId).metric('RECEIPT_DISCREPANCIES', { caps }, asOf)).toEqual({ metric: 'RECEIPT_DISCREPANCIES', value: 1, unit: 'count', breakdown: [], truncated: false });
    expect((await reader(tenantId).exceptions({ cap: 10 }, asOf)).exceptions).toEqual([discrepancy('ord_r1', 21, short('lin_2', 'itm_b', 5, 3), at(5))]);
  });

  describe('the exceptions report', () => {
    const tenantId = 'tenant-report';
    const e = tenantEvents(tenantId);
    beforeAll(async () => {
      await bed.project([
        e.item('itm_x', at(1), { reorderPoint: 5 }),
        e.item('itm_y', at(1), { reorderPoint: 5 }),
        e.warehouse('wh_1', at(1)),
        e.warehouse('wh_2', at(1)),
        // Stock-outs of itm_x in wh_1 (day 1) and itm_y in wh_1 (day 1, 11:00); itm_x low in wh_2 (day 2).
        e.box('box_x1', 'itm_x', 'wh_1', at(1)),
        e.box('box_x2', 'itm_x', 'wh_2', at(1), { expiresOn: '2026-11-09' }),
        e.move('box_x2', 'itm_x', 'receive', 9, at(1, 10)),
        e.move('box_x2', 'itm_x', 'consume', -7, at(2)),
        e.box('box_y1', 'itm_y', 'wh_1', at(1, 11)),
        e.box('box_y2', 'itm_y', 'wh_2', at(1), { expiresOn: '2026-11-15' }),
        e.move('box_y2', 'itm_y', 'receive', 20, at(1, 10)),
        e.box('box_y3', 'itm_y', 'wh_2', at(1), { expiresOn: '2026-12-01' }),
        e.move('box_y3', 'itm_y', 'receive', 1, at(1, 10)),
        ...pendingOrder(e, 'ord_old', 1, at(5)),
        ...pendingOrder(e, 'ord_new', 2, at(10)),
        e.dispatched('ord_new', at(10, 1)),
        e.drafted('ord_shipped', 3, 'cli_1', at(1)),
        e.dispatched('ord_shipped', at(2)),
        e.raised('ord_shipped', 'exc_1', at(6)),
        e.delivered('ord_shipped', at(7)),
        e.received('ord_shipped', at(8), [{ lineId: 'lin_1', catalogItemId: 'itm_x', expectedQty: 2, receivedQty: 1, reasonCode: 'short' }]),
        ...pendingOrder(e, 'ord_recent', 4, at(9)),
      ]);
    });

    it('lists every source by priority, then detectedAt, then the drill-down id', async () => {
      const result = await reader(tenantId).exceptions({ cap: 100 }, asOf);
      expect(result.exceptions.map((x) => [x.metric, x.priority, x.drillDownId, x.detectedAt])).toEqual([
        ['DELIVERY_EXCEPTIONS', 90, 'ord_shipped', at(6)],
        ['EXPIRING_STOCK', 80, 'box_x2', '2026-10-10T00:00:00.000Z'],
        ['EXPIRING_STOCK', 70, 'box_y2', '2026-10-16T00:00:00.000Z'],
        ['LOW_STOCK', 65, 'itm_x', at(1)],
        ['LOW_STOCK', 65, 'itm_y', at(1, 11)],
        ['LOW_STOCK', 55, 'itm_x', at(2)],
        ['RECEIPT_DISCREPANCIES', 50, 'ord_shipped', at(8)],
        ['EXPIRING_STOCK', 45, 'box_y3', '2026-11-01T00:00:00.000Z'],
        ['APPROVAL_BACKLOG', 40, 'ord_old', at(5)],
        ['APPROVAL_BACKLOG', 30, 'ord_recent', at(9)],
      ]);
      expect(result).toMatchObject({ total: 10, truncated: false });
    });

    it('narrows the report to the low and expiring stock of one catalog item, in the order of the full report', async () => {
      const result = await reader(tenantId).exceptions({ catalogItemId: 'itm_x', cap: 100 }, asOf);
      expect(result.exceptions.map((x) => [x.metric, x.drillDownId])).toEqual([
        ['EXPIRING_STOCK', 'box_x2'],
        ['LOW_STOCK', 'itm_x'],
        ['LOW_STOCK', 'itm_x'],
      ]);
      expect(result.total).toBe(3);
      const full = await reader(tenantId).exceptions({ cap: 100 }, asOf);
      expect(result.exceptions).toEqual(
        full.exceptions.filter((x) => (x.metric === 'LOW_STOCK' || x.metric === 'EXPIRING_STOCK') && x.reference.catalogItemId === 'itm_x'),
      );
      expect(result.exceptions.filter((x) => x.metric === 'LOW_STOCK').map((x) => x.reference)).toEqual([
        { catalogItemId: 'itm_x', warehouseId: 'wh_1', available: 0, reorderPoint: 5, unitOfMeasure: 'unit' },
        { catalogItemId: 'itm_x', warehouseId: 'wh_2', available: 2, reorderPoint: 5, unitOfMeasure: 'unit' },
      ]);
    });

    it('caps the report: each source reads cap + 1 rows, the first cap of all are listed', async () => {
      const result = await reader(tenantId).exceptions({ cap: 2 }, asOf);
      // delivery 1, expiring 3, low 3, discrepancies 1, approvals 2: 10 found, none of them beyond cap + 1 per source.
      expect(result.total).toBe(10);
      expect(result.truncated).toBe(true);
      expect(result.exceptions.map((x) => x.drillDownId)).toEqual(['ord_shipped', 'box_x2']);
      const one = await reader(tenantId).exceptions({ cap: 1 }, asOf);
      // delivery 1, expiring 2, low 2, discrepancies 1, approvals 2.
      expect(one).toMatchObject({ total: 8, truncated: true });
      expect(one.exceptions.map((x) => x.drillDownId)).toEqual(['ord_shipped']);
      expect(await reader(tenantId).metric('LOW_STOCK', { caps: { ...caps, counts: 1 } }, asOf)).toEqual({
        metric: 'LOW_STOCK',
        value: 1,
        unit: 'count',
        breakdown: [],
        truncated: true,
      });
      expect(await reader(tenantId).metric('LOW_STOCK', { caps: { ...caps, counts: 3 } }, asOf)).toMatchObject({ value: 3, truncated: false });
      expect(await reader(tenantId).metric('RECEIPT_DISCREPANCIES', { caps: { ...caps, counts: 0 } }, asOf)).toMatchObject({ value: 0, truncated: true });
    });
  });

  it('keeps tenants apart: the same ids in two tenants never mix', async () => {
    const a = tenantEvents('tenant-iso-a');
    const b = tenantEvents('tenant-iso-b');
    await bed.project([
      a.item('itm_1', at(1), { reorderPoint: 5 }),
      b.item('itm_1', at(1), { reorderPoint: 1 }),
      a.warehouse('wh_1', at(1)),
      b.warehouse('wh_1', at(1)),
      a.box('box_1', 'itm_1', 'wh_1', at(1), { expiresOn: '2026-11-20' }),
      b.box('box_1', 'itm_1', 'wh_1', at(1)),
      a.move('box_1', 'itm_1', 'receive', 2, at(1, 10)),
      b.move('box_1', 'itm_1', 'receive', 2, at(1, 10)),
      b.move('box_1', 'itm_1', 'consume', -1, at(2)),
      a.clinic('cli_1', 'A clinic', at(1)),
      b.clinic('cli_1', 'B clinic', at(1)),
      ...pendingOrder(a, 'ord_1', 1, at(5)),
      b.drafted('ord_1', 1, 'cli_1', at(1)),
    ]);
    const a1 = reader('tenant-iso-a');
    const b1 = reader('tenant-iso-b');
    expect((await a1.exceptions({ cap: 10 }, asOf)).exceptions.map((x) => x.metric)).toEqual(['LOW_STOCK', 'EXPIRING_STOCK', 'APPROVAL_BACKLOG']);
    expect(await b1.exceptions({ cap: 10 }, asOf)).toEqual({ total: 0, truncated: false, exceptions: [] });
    expect(await a1.comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [{ clinicId: 'cli_1', clinicName: 'A clinic', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 1 }],
    });
    expect(await b1.comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [{ clinicId: 'cli_1', clinicName: 'B clinic', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 0 }],
    });
    expect((await b1.metric('CONSUMPTION_TREND', { caps, window: { from: at(1, 0), to: at(3, 0) } }, asOf)).value).toBe(1);
    expect((await a1.metric('CONSUMPTION_TREND', { caps, window: { from: at(1, 0), to: at(3, 0) } }, asOf)).value).toBe(0);
    const nobody = reader('tenant-nobody');
    expect(await nobody.metric('PENDING_ORDERS', { caps }, asOf)).toEqual({ metric: 'PENDING_ORDERS', value: 0, unit: 'orders', breakdown: [], truncated: false });
    expect(await nobody.trend({ window: { from: at(1, 0), to: at(3, 0) }, granularity: 'day', cap: 10 })).toEqual({ granularity: 'day', truncated: false, series: [] });
  });

  it('dead-letters events that do not fit and applies the rest of the batch', async () => {
    const tenantId = 'tenant-dead';
    const e = tenantEvents(tenantId);
    const letters = await bed.project([
      e.item('itm_1', at(1), { reorderPoint: 1 }),
      e.warehouse('wh_1', at(1)),
      e.move('box_ghost', 'itm_1', 'consume', -1, at(2)),
      e.submitted('ord_ghost', at(2)),
      e.drafted('ord_1', 1, 'cli_1', at(1)),
      e.resolved('ord_1', 'exc_never', at(2)),
      e.item('itm_1', at(3)),
      e.box('box_1', 'itm_1', 'wh_1', at(3)),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['StockMovementRecorded', 'analytics'],
      ['OrderSubmitted', 'analytics'],
      ['DeliveryExceptionResolved', 'analytics'],
      ['CatalogItemDefined', 'analytics'],
    ]);
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_1', 'wh_1', 0, 1, at(3))]);
    expect(await reader(tenantId).comparison({ cap: 10 })).toEqual({ truncated: false, clinics: [] });
  });

  it('gives the same tables one event at a time as in batches', async () => {
    const rows = await bed.oneByOneDigestsMatch();
    expect(rows.map((row) => row.table)).toEqual(analyticsProjection.tables.map((table) => table.name));
    for (const row of rows) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
