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
import type { BoxRow, OrderRow } from './schema.js';
import { boxState, expiringOn, type AnalyticsState, type ClinicState, type ItemState, type LevelState, type OrderState } from './state.js';

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

/**
 * Folds one event into the state; every row it changes is changed in place and marked for the
 * batch's write. A throw leaves the state half-changed: the batch's savepoint rolls back and the
 * state is dropped with it (a live batch's is its own; a rebuild forgets its memory).
 */
export function foldEvent(event: ProjectedEvent, state: AnalyticsState): void {
  // Most of the log: tested before the switch compares the type with every case before it.
  if (event.type === 'StockMovementRecorded') return foldBoxChange(event, state);
  const { tenantId, occurredAt } = event;
  switch (event.type) {
    case 'CatalogItemDefined': {
      const { itemId, name, unitOfMeasure, reorderPoint, status } = event.data;
      if (state.items.get(tenantId, itemId) !== undefined) throw new ProjectionInvariantError(`catalog item ${tenantId}/${itemId} defined twice`);
      state.items.add(tenantId, itemId, { tenantId, itemId, name, unitOfMeasure, reorderPoint, status, changedIn: 0, used: state.batch });
      reevaluateLevels(state, state.levelsByItem.get(tenantId, itemId), occurredAt);
      return;
    }
    case 'CatalogItemRevised': {
      const { itemId, name, unitOfMeasure, reorderPoint } = event.data;
      const item = requireRow(state.items.get(tenantId, itemId), event.type, `catalog item ${tenantId}/${itemId}`);
      item.name = name ?? item.name;
      item.unitOfMeasure = unitOfMeasure ?? item.unitOfMeasure;
      item.reorderPoint = reorderPoint ?? item.reorderPoint;
      state.items.touch(item);
      reevaluateLevels(state, state.levelsByItem.get(tenantId, itemId), occurredAt);
      return;
    }
    case 'CatalogItemStatusChanged': {
      const { itemId, status } = event.data;
      const item = requireRow(state.items.get(tenantId, itemId), event.type, `catalog item ${tenantId}/${itemId}`);
      item.status = status;
      state.items.touch(item);
      reevaluateLevels(state, state.levelsByItem.get(tenantId, itemId), occurredAt);
      return;
    }
    case 'WarehouseOpened': {
      const { warehouseId, status } = event.data;
      if (state.warehouses.get(tenantId, warehouseId) !== undefined) throw new ProjectionInvariantError(`warehouse ${tenantId}/${warehouseId} opened twice`);
      state.warehouses.add(tenantId, warehouseId, { tenantId, warehouseId, status, changedIn: 0, used: state.batch });
      reevaluateLevels(state, state.levelsByWarehouse.get(tenantId, warehouseId), occurredAt);
      return;
    }
    case 'WarehouseStatusChanged': {
      const { warehouseId, status } = event.data;
      const warehouse = requireRow(state.warehouses.get(tenantId, warehouseId), event.type, `warehouse ${tenantId}/${warehouseId}`);
      warehouse.status = status;
      state.warehouses.touch(warehouse);
      reevaluateLevels(state, state.levelsByWarehouse.get(tenantId, warehouseId), occurredAt);
      return;
    }
    case 'ClinicOpened': {
      const { clinicId, name, status } = event.data;
      const clinic = clinicOf(state, tenantId, clinicId);
      if (clinic.name !== null) throw new ProjectionInvariantError(`clinic ${tenantId}/${clinicId} opened twice`);
      clinic.name = name;
      clinic.status = status;
      state.clinics.touch(clinic);
      return;
    }
    case 'ClinicRenamed':
    case 'ClinicStatusChanged': {
      const { clinicId } = event.data;
      const clinic = state.clinics.get(tenantId, clinicId);
      if (clinic?.name == null) throw new ProjectionInvariantError(`${event.type} of clinic ${tenantId}/${clinicId}, which was never opened`);
      if (event.type === 'ClinicRenamed') clinic.name = event.data.name;
      else clinic.status = event.data.status;
      state.clinics.touch(clinic);
      return;
    }
    case 'BoxRegistered': {
      const { boxId, catalogItemId, warehouseId, status, expiresOn } = event.data;
      if (state.boxes.get(tenantId, boxId) !== undefined) throw new ProjectionInvariantError(`box ${tenantId}/${boxId} registered twice`);
      const box = boxState({ tenantId, boxId, catalogItemId, warehouseId, status, onHand: 0, reserved: 0, expiresOn: expiresOn ?? null }, state.batch);
      state.boxes.add(tenantId, boxId, box);
      reevaluateLevel(state, state.levelOf(box), occurredAt);
      return;
    }
    case 'BoxStatusChanged':
      foldBoxChange(event, state);
      return;
    case 'OrderDrafted': {
      const { orderId, number, clinicId } = event.data;
      if (state.orders.get(tenantId, orderId) !== undefined) throw new ProjectionInvariantError(`order ${tenantId}/${orderId} drafted twice`);
      state.orders.add(tenantId, orderId, {
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
        changedIn: 0,
        used: state.batch,
      });
      const clinic = clinicOf(state, tenantId, clinicId);
      clinic.totalOrders += 1;
      state.clinics.touch(clinic);
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
      const order = requireRow(state.orders.get(tenantId, orderId), event.type, `order ${tenantId}/${orderId}`);
      order.used = state.batch;
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
      state.orders.touch(order);
      if (event.type === 'DeliveryExceptionRaised' || event.type === 'DeliveryExceptionResolved') {
        foldDeliveryException(state, event, order);
      } else if (event.type === 'FulfillmentReceived') {
        state.discrepancies.set(rowKey(tenantId, orderId), {
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
        state.discrepancies.set(rowKey(tenantId, orderId), { tenantId, orderId, orderNumber: order.number, detectedAt: occurredAt, entries: [] });
      }
      return;
    }
    default:
      return;
  }
}

/** A box's movement or status change: the hot path of a replay; the box and its levels change in place. */
function foldBoxChange(event: Extract<ProjectedEvent, { type: 'BoxStatusChanged' | 'StockMovementRecorded' }>, state: AnalyticsState): void {
  const { tenantId, occurredAt } = event;
  const { boxId } = event.data;
  const box = state.boxes.get(tenantId, boxId);
  // The message is made only when it is needed: this runs for most events of the log.
  if (box === undefined) throw missingRow(event.type, `box ${tenantId}/${boxId}`);
  box.used = state.batch;
  const usableBefore = usable(box);
  const from = state.levelOf(box);
  if (event.type === 'BoxStatusChanged') {
    box.status = event.data.status;
  } else {
    const movement = event.data;
    box.onHand += movement.quantityDelta;
    box.reserved += movement.reservedDelta ?? 0;
    if (movement.type === 'transfer' && movement.toWarehouseId !== undefined && movement.toWarehouseId !== box.warehouseId) {
      box.warehouseId = movement.toWarehouseId;
      box.level = undefined;
    }
    if (movement.type === 'consume') recordConsumption(state, tenantId, movement.catalogItemId, movement.occurredAt, -movement.quantityDelta);
  }
  box.expiringOn = expiringOn(box);
  state.boxes.touch(box);
  const to = state.levelOf(box);
  addAvailable(state, from, -usableBefore);
  addAvailable(state, to, usable(box));
  reevaluateLevel(state, from, occurredAt);
  if (to !== from) reevaluateLevel(state, to, occurredAt);
}

function requireRow<Row>(row: Row | undefined, eventType: string, what: string): Row {
  if (row === undefined) throw missingRow(eventType, what);
  return row;
}

function missingRow(eventType: string, what: string): ProjectionInvariantError {
  return new ProjectionInvariantError(`${eventType} of ${what}, which does not exist`);
}

/** The clinic, created (unopened, no orders) when only its orders name it so far. */
function clinicOf(state: AnalyticsState, tenantId: string, clinicId: string): ClinicState {
  const known = state.clinics.get(tenantId, clinicId);
  if (known !== undefined) {
    known.used = state.batch;
    return known;
  }
  const clinic: ClinicState = {
    tenantId,
    clinicId,
    name: null,
    status: null,
    totalOrders: 0,
    pendingApprovalOrders: 0,
    pendingOrders: 0,
    changedIn: 0,
    used: state.batch,
  };
  state.clinics.add(tenantId, clinicId, clinic);
  return clinic;
}

function addAvailable(state: AnalyticsState, level: LevelState, delta: number): void {
  if (delta === 0) return;
  level.available += delta;
  state.levels.touch(level);
}

/**
 * LOW_STOCK of each level after an event that changed its boxes, its item or its warehouse: a
 * level that becomes low takes the event's time, one that stays low keeps its time.
 */
function reevaluateLevels(state: AnalyticsState, levels: Iterable<LevelState> | undefined, occurredAt: string): void {
  for (const level of levels ?? []) reevaluateLevel(state, level, occurredAt);
}

function reevaluateLevel(state: AnalyticsState, level: LevelState, occurredAt: string): void {
  const item = level.item ?? (level.item = state.items.get(level.tenantId, level.catalogItemId));
  const warehouse = level.warehouse ?? (level.warehouse = state.warehouses.get(level.tenantId, level.warehouseId));
  const low = item?.status === 'active' && warehouse?.status === 'active' && level.available < item.reorderPoint;
  const detectedAt = low ? (level.detectedAt ?? occurredAt) : null;
  const priority = low ? lowStockPriority(level.available) : null;
  if (detectedAt === level.detectedAt && priority === level.priority) return;
  level.detectedAt = detectedAt;
  level.priority = priority;
  state.levels.touch(level);
}

/** The UTC day of an isoTimestamp (always `YYYY-MM-DDTHH:mm:ss.sssZ`): its first ten characters. */
function dayOf(instant: string): string {
  return instant.slice(0, 10);
}

function recordConsumption(state: AnalyticsState, tenantId: string, catalogItemId: string, movementOccurredAt: string, quantity: number): void {
  // A consume movement of an item not yet defined is not counted (it has no unit of measure).
  const item = state.items.get(tenantId, catalogItemId);
  if (item === undefined) return;
  const day = dayOf(movementOccurredAt);
  let entry = latestConsumption(state, item, day);
  if (entry === undefined) {
    const key = rowKey(tenantId, catalogItemId, item.unitOfMeasure, day);
    entry = state.consumption.get(key);
    if (entry === undefined) {
      entry = { tenantId, catalogItemId, unit: item.unitOfMeasure, day, quantity: 0, movements: 0, batch: state.batch };
      state.consumption.set(key, entry);
    }
    state.latestConsumption.set(item, entry);
  }
  entry.quantity += quantity;
  entry.movements += 1;
}

/** The item's latest entry of this batch when it is the one of `day` and the item's unit. */
function latestConsumption(state: AnalyticsState, item: ItemState, day: string) {
  const entry = state.latestConsumption.get(item);
  return entry !== undefined && entry.batch === state.batch && entry.day === day && entry.unit === item.unitOfMeasure ? entry : undefined;
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

function changeClinicCounters(state: AnalyticsState, order: OrderState, from: OrderStatus, to: OrderStatus): void {
  const clinic = requireRow(state.clinics.get(order.tenantId, order.clinicId), 'order status change', `clinic ${order.tenantId}/${order.clinicId}`);
  const pendingApproval = (status: OrderStatus): number => (status === 'pending_approval' ? 1 : 0);
  const pending = (status: OrderStatus): number => (pendingOrderStatuses.includes(status) ? 1 : 0);
  clinic.used = state.batch;
  clinic.pendingApprovalOrders += pendingApproval(to) - pendingApproval(from);
  clinic.pendingOrders += pending(to) - pending(from);
  state.clinics.touch(clinic);
}

function foldDeliveryException(
  state: AnalyticsState,
  event: Extract<ProjectedEvent, { type: 'DeliveryExceptionRaised' | 'DeliveryExceptionResolved' }>,
  order: OrderRow,
): void {
  const { tenantId } = event;
  const { orderId, exceptionId } = event.data;
  const key = rowKey(tenantId, orderId, exceptionId);
  const ids = [tenantId, orderId, exceptionId] as const;
  if (state.complete && !state.exceptions.has(key)) {
    // Nothing was read: the state keeps the open exceptions itself.
    const before = state.openExceptions.get(key);
    if (before !== undefined) {
      state.exceptions.set(key, { ids, open: before });
      state.exceptionsBefore.add(key);
    }
  }
  const open = state.exceptions.get(key)?.open ?? null;
  if (event.type === 'DeliveryExceptionRaised') {
    if (open !== null) throw new ProjectionInvariantError(`exception ${exceptionId} of order ${tenantId}/${orderId} raised twice`);
    const raised = { tenantId, orderId, exceptionId, orderNumber: order.number, reasonCode: event.data.reasonCode, detectedAt: event.occurredAt };
    state.exceptions.set(key, { ids, open: raised });
  } else {
    if (open === null) throw new ProjectionInvariantError(`exception ${exceptionId} of order ${tenantId}/${orderId} is not open`);
    state.exceptions.set(key, { ids, open: null });
  }
}
