import { randomUUID } from 'node:crypto';
import { newEvent, type EventData, type EventEnvelope, type EventType } from '../../src/events/index.js';
import type { MetricResult } from '../../src/analytics/results.js';
import type { AnalyticsCaps } from '../../src/config/analyticsCaps.js';
import { createAnalyticsFoldState, foldEvent, type AnalyticsFoldState } from '../../src/analytics/fold/analyticsFold.js';
import { createFoldComputer } from '../../src/analytics/fold/foldComputer.js';

/** Events and a fold for the analytics fold's tests: one tenant, a fixed asOf, days of November 2026. */

export const tenant = 'ten_1';
export const caps: AnalyticsCaps = { counts: 100, backlog: 100, trend: 100, exceptions: 100, comparison: 100 };
export const asOf = '2026-11-10T12:00:00.000Z';

export function ev<T extends EventType>(type: T, data: EventData<T>, occurredAt: string, tenantId = tenant): EventEnvelope {
  return newEvent(type, data, { eventId: randomUUID(), tenantId, occurredAt });
}

export function fold(events: readonly EventEnvelope[]): AnalyticsFoldState {
  const state = createAnalyticsFoldState(tenant);
  for (const event of events) foldEvent(state, event);
  return state;
}

export function computer(events: readonly EventEnvelope[]) {
  return createFoldComputer(fold(events), tenant);
}

// ── Event builders ──
export const t = (day: number, hour = 0, minute = 0) => new Date(Date.UTC(2026, 10, day, hour, minute)).toISOString();

export function item(itemId: string, at: string, over: Partial<EventData<'CatalogItemDefined'>> = {}) {
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
export const warehouse = (warehouseId: string, at: string, status: 'active' | 'inactive' | 'closed' = 'active') =>
  ev('WarehouseOpened', { warehouseId, name: `Warehouse ${warehouseId}`, kind: 'central', status }, at);
export function box(boxId: string, itemId: string, warehouseId: string, at: string, over: Partial<EventData<'BoxRegistered'>> = {}) {
  return ev('BoxRegistered', { boxId, code: boxId, catalogItemId: itemId, warehouseId, status: 'active', origin: { type: 'purchase' }, ...over }, at);
}
export function move(
  type: EventData<'StockMovementRecorded'>['type'],
  boxId: string,
  itemId: string,
  quantityDelta: number,
  at: string,
  over: Partial<EventData<'StockMovementRecorded'>> = {},
) {
  return ev('StockMovementRecorded', { movementId: randomUUID(), type, boxId, catalogItemId: itemId, quantityDelta, actorId: 'mem_1', occurredAt: at, ...over }, at);
}
export const boxStatus = (boxId: string, status: EventData<'BoxStatusChanged'>['status'], at: string) => ev('BoxStatusChanged', { boxId, status }, at);
export function draft(orderId: string, number: number, clinicId: string, at: string) {
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
      lineCount: 1,
    },
    at,
  );
}
export const submit = (orderId: string, at: string) =>
  ev('OrderSubmitted', { orderId, submittedBy: 'mem_1', approvalPlan: { policyVersion: 1, requiresApproval: true, steps: [] } }, at);
export const requestApproval = (orderId: string, at: string, stage = 'lead') => ev('OrderApprovalRequested', { orderId, stage }, at);
export const approve = (orderId: string, at: string) => ev('OrderApproved', { orderId }, at);
export const dispatch = (orderId: string, at: string) =>
  ev(
    'FulfillmentDispatched',
    { orderId, fulfillmentId: `ful_${orderId}`, sourceWarehouseId: 'wh_1', destinationWarehouseId: 'wh_2', dispatchedBy: 'mem_1', boxIds: ['box_x'] },
    at,
  );
export const deliver = (orderId: string, at: string) => ev('FulfillmentDelivered', { orderId, deliveredBy: 'mem_1', receivedBy: 'mem_2', deliveredAt: at }, at);
export function receive(orderId: string, at: string, discrepancies: EventData<'FulfillmentReceived'>['discrepancies'] = []) {
  return ev('FulfillmentReceived', { orderId, receivedBy: 'mem_2', receivedAt: at, lines: [], discrepancies }, at);
}
export const close = (orderId: string, at: string) => ev('FulfillmentClosed', { orderId, closedBy: 'mem_1', outcome: 'complete' }, at);
export const raise = (orderId: string, exceptionId: string, at: string) =>
  ev('DeliveryExceptionRaised', { orderId, exceptionId, reasonCode: 'delayed', description: 'late', reportedBy: 'mem_1' }, at);
export const resolve = (orderId: string, exceptionId: string, at: string) =>
  ev('DeliveryExceptionResolved', { orderId, exceptionId, resolution: 'redelivered', resolvedBy: 'mem_1' }, at);
export const clinic = (clinicId: string, name: string, at: string, tenantId = tenant) => ev('ClinicOpened', { clinicId, name, status: 'active' }, at, tenantId);

export const counted = (metric: MetricResult['metric'], value: number, truncated = false): MetricResult => ({
  metric,
  value,
  unit: 'count',
  breakdown: [],
  truncated,
});
