import {
  allCycleStages,
  lowStockPriority,
  pendingOrderStatuses,
  usableBoxStatus,
  type CycleMilestone,
} from '../../src/analytics/definitions.js';
import type { OrderStatus } from '../../src/events/index.js';
import { orderStatusAfter } from '../../src/events/orderStatusTransitions.js';
import { ProjectionInvariantError, type ProjectedEvent } from '../../src/projecting/projection.js';
import { rowKey } from '../../src/projecting/rowChanges.js';
import { boxState, expiringOn, indexLevel, type AnalyticsState } from './loadState.js';
import type { BoxRow, ClinicRow, OrderRow } from './schema.js';

/** What a box adds to its stock level's available quantity. */
function usable(box: Pick<BoxRow, 'status' | 'onHand' | 'reserved'>): number {
  return box.status === usableBoxStatus ? box.onHand - box.reserved : 0;
}

const milestoneOf: Partial<Record<ProjectedEvent['type'], CycleMilestone>> = {
  OrderSubmitted: 'submitted',
  OrderApproved: 'approved',
  FulfillmentDispatched: 'dispatched',
  FulfillmentDelivered: 'delivered',
  FulfillmentReceived: 'received',
};

const milestoneColumn = {
  submitted: 'submittedAt',
  approved: 'approvedAt',
  dispatched: 'dispatchedAt',
  delivered: 'deliveredAt',
  received: 'receivedAt',
} as const satisfies Record<CycleMilestone, keyof OrderRow>;

export function foldEvent(event: ProjectedEvent, state: AnalyticsState): void {
  const { tenantId, occurredAt } = event;
  switch (event.type) {
    case 'CatalogItemDefined': {
      const { itemId, name, unitOfMeasure, reorderPoint, status } = event.data;
      const key = rowKey(tenantId, itemId);
      if (state.items.get(key) !== undefined) throw new ProjectionInvariantError(`catalog item ${tenantId}/${itemId} defined twice`);
      state.items.set(key, { tenantId, itemId, name, unitOfMeasure, reorderPoint, status });
      reevaluateLevels(state, state.levelsByItem.get(key), occurredAt);
      return;
    }
    case 'CatalogItemRevised': {
      const { itemId, name, unitOfMeasure, reorderPoint } = event.data;
      const key = rowKey(tenantId, itemId);
      const item = requireRow(state.items.get(key), event.type, `catalog item ${tenantId}/${itemId}`);
      state.items.set(key, {
        ...item,
        name: name ?? item.name,
        unitOfMeasure: unitOfMeasure ?? item.unitOfMeasure,
        reorderPoint: reorderPoint ?? item.reorderPoint,
      });
      reevaluateLevels(state, state.levelsByItem.get(key), occurredAt);
      return;
    }
    case 'CatalogItemStatusChanged': {
      const { itemId, status } = event.data;
      const key = rowKey(tenantId, itemId);
      const item = requireRow(state.items.get(key), event.type, `catalog item ${tenantId}/${itemId}`);
      state.items.set(key, { ...item, status });
      reevaluateLevels(state, state.levelsByItem.get(key), occurredAt);
      return;
    }
    case 'WarehouseOpened': {
      const { warehouseId, status } = event.data;
      const key = rowKey(tenantId, warehouseId);
      if (state.warehouses.get(key) !== undefined) throw new ProjectionInvariantError(`warehouse ${tenantId}/${warehouseId} opened twice`);
      state.warehouses.set(key, { tenantId, warehouseId, status });
      reevaluateLevels(state, state.levelsByWarehouse.get(key), occurredAt);
      return;
    }
    case 'WarehouseStatusChanged': {
      const { warehouseId, status } = event.data;
      const key = rowKey(tenantId, warehouseId);
      const warehouse = requireRow(state.warehouses.get(key), event.type, `warehouse ${tenantId}/${warehouseId}`);
      state.warehouses.set(key, { ...warehouse, status });
      reevaluateLevels(state, state.levelsByWarehouse.get(key), occurredAt);
      return;
    }
    case 'ClinicOpened': {
      const { clinicId, name, status } = event.data;
      const key = rowKey(tenantId, clinicId);
      const clinic = state.clinics.get(key) ?? newClinic(tenantId, clinicId);
      if (clinic.name !== null) throw new ProjectionInvariantError(`clinic ${tenantId}/${clinicId} opened twice`);
      state.clinics.set(key, { ...clinic, name, status });
      return;
    }
    case 'ClinicRenamed':
    case 'ClinicStatusChanged': {
      const { clinicId } = event.data;
      const key = rowKey(tenantId, clinicId);
      const clinic = state.clinics.get(key);
      if (clinic?.name == null) throw new ProjectionInvariantError(`${event.type} of clinic ${tenantId}/${clinicId}, which was never opened`);
      state.clinics.set(key, event.type === 'ClinicRenamed' ? { ...clinic, name: event.data.name } : { ...clinic, status: event.data.status });
      return;
    }
    case 'BoxRegistered': {
      const { boxId, catalogItemId, warehouseId, status, expiresOn } = event.data;
      const key = rowKey(tenantId, boxId);
      if (state.boxes.get(key) !== undefined) throw new ProjectionInvariantError(`box ${tenantId}/${boxId} registered twice`);
      const box = boxState({ tenantId, boxId, catalogItemId, warehouseId, status, onHand: 0, reserved: 0, expiresOn: expiresOn ?? null });
      state.boxes.set(key, box);
      reevaluateLevel(state, ensureLevel(state, box.levelKey, tenantId, catalogItemId, warehouseId), occurredAt);
      return;
    }
    case 'BoxStatusChanged':
    case 'StockMovementRecorded': {
      // The hot path of a replay (most of the log): the box and its levels change in place.
      const { boxId } = event.data;
      const key = rowKey(tenantId, boxId);
      const box = requireRow(state.boxes.get(key), event.type, `box ${tenantId}/${boxId}`);
      const usableBefore = usable(box);
      const from = ensureLevel(state, box.levelKey, tenantId, box.catalogItemId, box.warehouseId);
      if (event.type === 'BoxStatusChanged') {
        box.status = event.data.status;
      } else {
        const movement = event.data;
        box.onHand += movement.quantityDelta;
        box.reserved += movement.reservedDelta ?? 0;
        if (movement.type === 'transfer' && movement.toWarehouseId !== undefined && movement.toWarehouseId !== box.warehouseId) {
          box.warehouseId = movement.toWarehouseId;
          box.levelKey = rowKey(tenantId, box.catalogItemId, box.warehouseId);
        }
        if (movement.type === 'consume') recordConsumption(state, event.tenantId, movement.catalogItemId, movement.occurredAt, -movement.quantityDelta);
      }
      box.expiringOn = expiringOn(box);
      state.boxes.touch(key);
      const to = ensureLevel(state, box.levelKey, tenantId, box.catalogItemId, box.warehouseId);
      addAvailable(state, from, -usableBefore);
      addAvailable(state, to, usable(box));
      reevaluateLevel(state, from, occurredAt);
      if (to !== from) reevaluateLevel(state, to, occurredAt);
      return;
    }
    case 'OrderDrafted': {
      const { orderId, number, clinicId } = event.data;
      const key = rowKey(tenantId, orderId);
      if (state.orders.get(key) !== undefined) throw new ProjectionInvariantError(`order ${tenantId}/${orderId} drafted twice`);
      state.orders.set(key, {
        tenantId,
        orderId,
        number,
        clinicId,
        status: 'draft',
        pendingSince: null,
        submittedAt: null,
        approvedAt: null,
        dispatchedAt: null,
        deliveredAt: null,
        receivedAt: null,
      });
      const clinicKey = rowKey(tenantId, clinicId);
      const clinic = state.clinics.get(clinicKey) ?? newClinic(tenantId, clinicId);
      state.clinics.set(clinicKey, { ...clinic, totalOrders: clinic.totalOrders + 1 });
      return;
    }
    case 'OrderSubmitted':
    case 'OrderApprovalRequested':
    case 'OrderApproved':
    case 'OrderRejected':
    case 'OrderCancelled':
    case 'OrderAllocated':
    case 'OrderPickingStarted':
    case 'FulfillmentDispatched':
    case 'DeliveryExceptionRaised':
    case 'DeliveryExceptionResolved':
    case 'FulfillmentDelivered':
    case 'FulfillmentReceived':
    case 'FulfillmentClosed': {
      const { orderId } = event.data;
      const key = rowKey(tenantId, orderId);
      const order = { ...requireRow(state.orders.get(key), event.type, `order ${tenantId}/${orderId}`) };
      const status = orderStatusAfter(event);
      if (status !== undefined && status !== order.status) {
        changeClinicCounters(state, order, order.status, status);
        order.pendingSince = status === 'pending_approval' ? occurredAt : null;
        order.status = status;
      }
      const milestone = milestoneOf[event.type];
      if (milestone !== undefined && order[milestoneColumn[milestone]] === null) {
        order[milestoneColumn[milestone]] = occurredAt;
        recordCycleSamples(state, order, milestone, occurredAt);
      }
      state.orders.set(key, order);
      if (event.type === 'DeliveryExceptionRaised' || event.type === 'DeliveryExceptionResolved') {
        foldDeliveryException(state, event, order);
      } else if (event.type === 'FulfillmentReceived') {
        state.discrepancies.set(key, {
          tenantId,
          orderId,
          orderNumber: order.number,
          detectedAt: occurredAt,
          entries: event.data.discrepancies.map(({ lineId, catalogItemId, expectedQty, receivedQty, reasonCode }) => ({
            lineId,
            catalogItemId,
            expectedQty,
            receivedQty,
            reasonCode,
          })),
        });
      } else if (event.type === 'FulfillmentClosed') {
        state.discrepancies.set(key, { tenantId, orderId, orderNumber: order.number, detectedAt: occurredAt, entries: [] });
      }
      return;
    }
    default:
      return;
  }
}

function requireRow<Row>(row: Row | undefined, eventType: string, what: string): Row {
  if (row === undefined) throw new ProjectionInvariantError(`${eventType} of ${what}, which does not exist`);
  return row;
}

function newClinic(tenantId: string, clinicId: string): ClinicRow {
  return { tenantId, clinicId, name: null, status: null, totalOrders: 0, pendingApprovalOrders: 0, pendingOrders: 0 };
}

function ensureLevel(state: AnalyticsState, key: string, tenantId: string, catalogItemId: string, warehouseId: string): string {
  if (state.levels.has(key)) return key;
  return indexLevel(state, { tenantId, catalogItemId, warehouseId, available: 0, detectedAt: null, priority: null }, true);
}

function addAvailable(state: AnalyticsState, key: string, delta: number): void {
  if (delta === 0) return;
  const level = requireRow(state.levels.get(key), 'stock change', `stock level ${key.replaceAll('\u0000', '/')}`);
  level.available += delta;
  state.levels.touch(key);
}

/**
 * LOW_STOCK of each level after an event that changed its boxes, its item or its warehouse: a
 * level that becomes low takes the event's time, one that stays low keeps its time.
 */
function reevaluateLevels(state: AnalyticsState, keys: Iterable<string> | undefined, occurredAt: string): void {
  for (const key of keys ?? []) reevaluateLevel(state, key, occurredAt);
}

function reevaluateLevel(state: AnalyticsState, key: string, occurredAt: string): void {
  const level = state.levels.get(key);
  if (level === undefined) return;
  const item = state.items.get(level.itemKey);
  const warehouse = state.warehouses.get(level.warehouseKey);
  const low = item?.status === 'active' && warehouse?.status === 'active' && level.available < item.reorderPoint;
  const detectedAt = low ? (level.detectedAt ?? occurredAt) : null;
  const priority = low ? lowStockPriority(level.available) : null;
  if (detectedAt === level.detectedAt && priority === level.priority) return;
  level.detectedAt = detectedAt;
  level.priority = priority;
  state.levels.touch(key);
}

/** The UTC day of an isoTimestamp (always `YYYY-MM-DDTHH:mm:ss.sssZ`): its first ten characters. */
function dayOf(instant: string): string {
  return instant.slice(0, 10);
}

function recordConsumption(state: AnalyticsState, tenantId: string, catalogItemId: string, movementOccurredAt: string, quantity: number): void {
  // A consume movement of an item not yet defined is not counted (it has no unit of measure).
  const item = state.items.get(rowKey(tenantId, catalogItemId));
  if (item === undefined) return;
  const day = dayOf(movementOccurredAt);
  const key = rowKey(tenantId, catalogItemId, item.unitOfMeasure, day);
  const entry = state.consumption.get(key);
  if (entry === undefined) state.consumption.set(key, { tenantId, catalogItemId, unit: item.unitOfMeasure, day, quantity, movements: 1 });
  else {
    entry.quantity += quantity;
    entry.movements += 1;
  }
}

/** A stage sample for each stage that `milestone` ends and whose start the order has reached. */
function recordCycleSamples(state: AnalyticsState, order: OrderRow, milestone: CycleMilestone, occurredAt: string): void {
  for (const stage of allCycleStages) {
    if (stage.to !== milestone) continue;
    const from = order[milestoneColumn[stage.from]];
    if (from === null) continue;
    const day = dayOf(occurredAt);
    const key = rowKey(order.tenantId, day, stage.stage);
    const durationMs = Date.parse(occurredAt) - Date.parse(from);
    const entry = state.cycles.get(key);
    if (entry === undefined) state.cycles.set(key, { tenantId: order.tenantId, day, stage: stage.stage, samples: 1, totalMs: durationMs });
    else {
      entry.samples += 1;
      entry.totalMs += durationMs;
    }
  }
}

function changeClinicCounters(state: AnalyticsState, order: OrderRow, from: OrderStatus, to: OrderStatus): void {
  const key = rowKey(order.tenantId, order.clinicId);
  const clinic = requireRow(state.clinics.get(key), 'order status change', `clinic ${order.tenantId}/${order.clinicId}`);
  const pendingApproval = (status: OrderStatus): number => (status === 'pending_approval' ? 1 : 0);
  const pending = (status: OrderStatus): number => (pendingOrderStatuses.includes(status) ? 1 : 0);
  state.clinics.set(key, {
    ...clinic,
    pendingApprovalOrders: clinic.pendingApprovalOrders + pendingApproval(to) - pendingApproval(from),
    pendingOrders: clinic.pendingOrders + pending(to) - pending(from),
  });
}

function foldDeliveryException(
  state: AnalyticsState,
  event: Extract<ProjectedEvent, { type: 'DeliveryExceptionRaised' | 'DeliveryExceptionResolved' }>,
  order: OrderRow,
): void {
  const { tenantId } = event;
  const { orderId, exceptionId } = event.data;
  const key = rowKey(tenantId, orderId, exceptionId);
  const open = state.exceptions.get(key)?.open ?? null;
  const ids = [tenantId, orderId, exceptionId] as const;
  if (event.type === 'DeliveryExceptionRaised') {
    if (open !== null) throw new ProjectionInvariantError(`exception ${exceptionId} of order ${tenantId}/${orderId} raised twice`);
    const raised = { tenantId, orderId, exceptionId, orderNumber: order.number, reasonCode: event.data.reasonCode, detectedAt: event.occurredAt };
    state.exceptions.set(key, { ids, open: raised });
  } else {
    if (open === null) throw new ProjectionInvariantError(`exception ${exceptionId} of order ${tenantId}/${orderId} is not open`);
    state.exceptions.set(key, { ids, open: null });
  }
}
