import { afterAll, beforeAll, expect } from 'vitest';
import type { EventData, EventEnvelope } from '../../src/events/index.js';
import type { AnalyticsCaps } from '../../src/config/analyticsCaps.js';
import type { AnalyticsComputer } from '../../src/analytics/results.js';
import { analyticsProjection } from '../../projections/analytics/projection.js';
import { createAnalyticsReader } from '../../projections/analytics/queries.js';
import { createProjectionTestBed, event, type ProjectionTestBed } from './projectionTestBed.js';

/** 2026-11-`day` at hh:mm:ss.ms UTC (1 November 2026 is a Sunday, the 2nd a Monday). */
export const at = (day: number, hour = 9, minute = 0, second = 0, ms = 0): string => new Date(Date.UTC(2026, 10, day, hour, minute, second, ms)).toISOString();

export const caps: AnalyticsCaps = { counts: 100, backlog: 100, trend: 1000, exceptions: 100, comparison: 100 };
export const asOf = at(10, 15);

type ItemFields = Partial<Pick<EventData<'CatalogItemDefined'>, 'name' | 'unitOfMeasure' | 'reorderPoint' | 'status'>>;
export type Discrepancy = EventData<'FulfillmentReceived'>['discrepancies'][number];

/** Event builders for one tenant. */
export function tenantEvents(tenantId: string) {
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
          lineCount: 1,
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
export function pendingOrder(e: ReturnType<typeof tenantEvents>, orderId: string, number: number, since: string): EventEnvelope[] {
  return [e.drafted(orderId, number, 'cli_1', at(1)), e.submitted(orderId, at(1, 10)), e.requested(orderId, since)];
}

export const lowStockItem = (catalogItemId: string, warehouseId: string, available: number, reorderPoint: number, detectedAt: string, unitOfMeasure = 'unit') => ({
  metric: 'LOW_STOCK',
  priority: available <= 0 ? 65 : 55,
  drillDownType: 'catalog_item',
  drillDownId: catalogItemId,
  detectedAt,
  reference: { catalogItemId, warehouseId, available, reorderPoint, unitOfMeasure },
});

/**
 * The batch-invariance check of analytics.int.test.ts ('gives the same tables one event at a time
 * as in batches'), for the beds of the other analytics projection test files: each bed holds only
 * its own file's events, so each checks them before it closes.
 */
export async function expectSameTablesOneByOne(bed: ProjectionTestBed): Promise<void> {
  const rows = await bed.oneByOneDigestsMatch();
  expect(rows.map((row) => row.table)).toEqual(analyticsProjection.tables.map((table) => table.name));
  for (const row of rows) expect(row.oneByOne, row.table).toBe(row.batched);
}

/**
 * The analytics projection's bed for a themed test file: opened before its tests and, before it
 * closes, checked with expectSameTablesOneByOne on that file's events.
 */
export function themedAnalyticsBed(): { readonly bed: ProjectionTestBed; reader(tenantId: string): AnalyticsComputer } {
  let opened: ProjectionTestBed | undefined;
  beforeAll(async () => {
    opened = await createProjectionTestBed([analyticsProjection]);
  });
  afterAll(async () => {
    if (opened === undefined) return;
    await expectSameTablesOneByOne(opened);
    await opened.close();
  });
  const bed = (): ProjectionTestBed => {
    if (opened === undefined) throw new Error('the analytics bed is opened in beforeAll');
    return opened;
  };
  return {
    get bed() {
      return bed();
    },
    reader: (tenantId) => createAnalyticsReader(bed().pool, tenantId),
  };
}
