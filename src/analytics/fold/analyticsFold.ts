import { isoUtc } from '../../platform/clock.js';
import { allCycleStages, usableBoxStatus, utcDate, type CycleMilestone, type CycleStage } from '../definitions.js';
import type { EventEnvelope, OrderStatus } from '../../events/index.js';
import { orderStatusAfter } from '../../events/orderStatusTransitions.js';

/**
 * The independent fold behind `evidence verify`: the state of one tenant's analytics, built from
 * its events in log order by plain TypeScript. It shares the definitions (definitions.ts) with
 * the projection's SQL, never its code: the two must reach the same figures on their own.
 *
 * `foldEvent` mutates the state; every collection is a Map keyed by id, and the stock levels are
 * indexed by item and by warehouse so that no event costs more than the levels it touches.
 */

export type ItemState = {
  name: string;
  unitOfMeasure: string;
  reorderPoint: number;
  status: string;
};

export type WarehouseState = { status: string };
export type ClinicState = { name: string; status: string };

export type BoxState = {
  readonly boxId: string;
  readonly catalogItemId: string;
  warehouseId: string;
  status: string;
  readonly expiresOn: string | undefined;
  onHand: number;
  reserved: number;
};

/** One (catalog item, warehouse) pair that has held a box of the item. */
export type StockLevelState = {
  readonly catalogItemId: string;
  readonly warehouseId: string;
  /** Sum of (onHand − reserved) over the item's boxes now in the warehouse with status `active`. */
  available: number;
  /** occurredAt of the event that made the level low; undefined while it is not low. */
  lowSince: string | undefined;
};

export type DiscrepancyEntry = {
  readonly lineId: string;
  readonly catalogItemId: string;
  readonly expectedQty: number;
  readonly receivedQty: number;
  readonly reasonCode: string;
};

export type OrderFoldState = {
  readonly orderId: string;
  readonly number: number;
  readonly clinicId: string;
  status: OrderStatus;
  /** occurredAt of the event that moved the order into pending_approval from another status. */
  pendingSince: string | undefined;
  /** First time each milestone was reached (envelope occurredAt). */
  readonly milestones: Map<CycleMilestone, string>;
  /** The entries of the latest FulfillmentReceived, until the order's FulfillmentClosed. */
  openDiscrepancies: { readonly detectedAt: string; readonly entries: readonly DiscrepancyEntry[] } | undefined;
};

export type DeliveryExceptionState = {
  readonly exceptionId: string;
  readonly orderId: string;
  readonly reasonCode: string;
  readonly detectedAt: string;
};

/** Stage samples of one stage on one UTC day. */
export type CycleDayTotals = { totalMs: number; samples: number };

/** Consumption of one item, in one unit, on one UTC day. */
export type ConsumptionDay = {
  readonly catalogItemId: string;
  readonly unitOfMeasure: string;
  /** YYYY-MM-DD */
  readonly day: string;
  quantity: number;
  movements: number;
};

export type AnalyticsFoldState = {
  readonly tenantId: string;
  readonly items: Map<string, ItemState>;
  readonly warehouses: Map<string, WarehouseState>;
  readonly clinics: Map<string, ClinicState>;
  readonly boxes: Map<string, BoxState>;
  /** Keyed by levelKey(catalogItemId, warehouseId). */
  readonly stockLevels: Map<string, StockLevelState>;
  readonly levelsByItem: Map<string, Set<StockLevelState>>;
  readonly levelsByWarehouse: Map<string, Set<StockLevelState>>;
  /** Drafted orders. Events of an order that was never drafted are not folded. */
  readonly orders: Map<string, OrderFoldState>;
  /** Number of OrderDrafted events per clinicId. */
  readonly draftsByClinic: Map<string, number>;
  /** Open delivery exceptions by exceptionId. */
  readonly openDeliveryExceptions: Map<string, DeliveryExceptionState>;
  /** Stage → UTC day (YYYY-MM-DD) → totals. */
  readonly cycleSamples: Map<CycleStage, Map<string, CycleDayTotals>>;
  /** Keyed by item, unit and day. */
  readonly consumption: Map<string, ConsumptionDay>;
  /** Events folded so far. */
  eventCount: number;
};

export function createAnalyticsFoldState(tenantId: string): AnalyticsFoldState {
  return {
    tenantId,
    items: new Map(),
    warehouses: new Map(),
    clinics: new Map(),
    boxes: new Map(),
    stockLevels: new Map(),
    levelsByItem: new Map(),
    levelsByWarehouse: new Map(),
    orders: new Map(),
    draftsByClinic: new Map(),
    openDeliveryExceptions: new Map(),
    cycleSamples: new Map(),
    consumption: new Map(),
    eventCount: 0,
  };
}

export function levelKey(catalogItemId: string, warehouseId: string): string {
  return `${catalogItemId}\u0000${warehouseId}`;
}

function consumptionKey(catalogItemId: string, unitOfMeasure: string, day: string): string {
  return `${catalogItemId}\u0000${unitOfMeasure}\u0000${day}`;
}

/** Whether the level is low with the item and warehouse as they are now. */
export function isLevelLow(state: AnalyticsFoldState, level: StockLevelState): boolean {
  const item = state.items.get(level.catalogItemId);
  const warehouse = state.warehouses.get(level.warehouseId);
  return item !== undefined && item.status === 'active' && warehouse?.status === 'active' && level.available < item.reorderPoint;
}

const milestoneOf: Partial<Record<EventEnvelope['type'], CycleMilestone>> = {
  OrderSubmitted: 'submitted',
  OrderApproved: 'approved',
  FulfillmentDispatched: 'dispatched',
  FulfillmentDelivered: 'delivered',
  FulfillmentReceived: 'received',
};

/** Folds one event of the state's tenant into the state. Events must come in log order. */
export function foldEvent(state: AnalyticsFoldState, event: EventEnvelope): void {
  if (event.tenantId !== state.tenantId) {
    throw new Error(`event ${event.eventId} belongs to tenant ${event.tenantId}, not ${state.tenantId}`);
  }
  state.eventCount += 1;
  const at = isoUtc(event.occurredAt);
  switch (event.type) {
    // ── Catalog ──
    case 'CatalogItemDefined': {
      const d = event.data;
      state.items.set(d.itemId, { name: d.name, unitOfMeasure: d.unitOfMeasure, reorderPoint: d.reorderPoint, status: d.status });
      reevaluate(state, state.levelsByItem.get(d.itemId), at);
      return;
    }
    case 'CatalogItemRevised': {
      const d = event.data;
      const item = state.items.get(d.itemId);
      if (item === undefined) return; // still not defined: not active, unit ''
      if (d.name !== undefined) item.name = d.name;
      if (d.unitOfMeasure !== undefined) item.unitOfMeasure = d.unitOfMeasure;
      if (d.reorderPoint !== undefined) item.reorderPoint = d.reorderPoint;
      reevaluate(state, state.levelsByItem.get(d.itemId), at);
      return;
    }
    case 'CatalogItemStatusChanged': {
      const item = state.items.get(event.data.itemId);
      if (item === undefined) return;
      item.status = event.data.status;
      reevaluate(state, state.levelsByItem.get(event.data.itemId), at);
      return;
    }

    // ── Locations ──
    case 'WarehouseOpened':
      state.warehouses.set(event.data.warehouseId, { status: event.data.status });
      reevaluate(state, state.levelsByWarehouse.get(event.data.warehouseId), at);
      return;
    case 'WarehouseStatusChanged': {
      const warehouse = state.warehouses.get(event.data.warehouseId);
      if (warehouse === undefined) return; // not opened yet: not active
      warehouse.status = event.data.status;
      reevaluate(state, state.levelsByWarehouse.get(event.data.warehouseId), at);
      return;
    }
    case 'ClinicOpened':
      state.clinics.set(event.data.clinicId, { name: event.data.name, status: event.data.status });
      return;
    case 'ClinicRenamed': {
      const clinic = state.clinics.get(event.data.clinicId);
      if (clinic !== undefined) clinic.name = event.data.name;
      return;
    }
    case 'ClinicStatusChanged': {
      const clinic = state.clinics.get(event.data.clinicId);
      if (clinic !== undefined) clinic.status = event.data.status;
      return;
    }

    // ── Stock ──
    case 'BoxRegistered': {
      const d = event.data;
      const touched: StockLevelState[] = [];
      const earlier = state.boxes.get(d.boxId);
      if (earlier !== undefined) touched.push(withdraw(state, earlier));
      const box: BoxState = {
        boxId: d.boxId,
        catalogItemId: d.catalogItemId,
        warehouseId: d.warehouseId,
        status: d.status,
        expiresOn: d.expiresOn,
        onHand: 0,
        reserved: 0,
      };
      state.boxes.set(d.boxId, box);
      touched.push(deposit(state, box));
      reevaluate(state, touched, at);
      return;
    }
    case 'BoxStatusChanged': {
      const box = state.boxes.get(event.data.boxId);
      if (box === undefined) return;
      withdraw(state, box);
      box.status = event.data.status;
      reevaluate(state, [deposit(state, box)], at);
      return;
    }
    case 'StockMovementRecorded': {
      const d = event.data;
      if (d.type === 'consume') {
        const item = state.items.get(d.catalogItemId);
        if (item !== undefined) {
          const day = utcDate(d.occurredAt);
          const key = consumptionKey(d.catalogItemId, item.unitOfMeasure, day);
          let row = state.consumption.get(key);
          if (row === undefined) {
            row = { catalogItemId: d.catalogItemId, unitOfMeasure: item.unitOfMeasure, day, quantity: 0, movements: 0 };
            state.consumption.set(key, row);
          }
          row.quantity += -d.quantityDelta;
          row.movements += 1;
        }
      }
      const box = state.boxes.get(d.boxId);
      if (box === undefined) return;
      const from = withdraw(state, box);
      box.onHand += d.quantityDelta;
      box.reserved += d.reservedDelta ?? 0;
      if (d.type === 'transfer' && d.toWarehouseId !== undefined) box.warehouseId = d.toWarehouseId;
      const to = deposit(state, box);
      reevaluate(state, from === to ? [to] : [from, to], at);
      return;
    }

    // ── Orders ──
    case 'OrderDrafted': {
      const d = event.data;
      state.orders.set(d.orderId, {
        orderId: d.orderId,
        number: d.number,
        clinicId: d.clinicId,
        status: 'draft',
        pendingSince: undefined,
        milestones: new Map(),
        openDiscrepancies: undefined,
      });
      state.draftsByClinic.set(d.clinicId, (state.draftsByClinic.get(d.clinicId) ?? 0) + 1);
      return;
    }
    case 'OrderSubmitted':
    case 'OrderApprovalRequested':
    case 'OrderApprovalGranted':
    case 'OrderApproved':
    case 'OrderRejected':
    case 'OrderCancelled':
    case 'OrderAllocated':
    case 'OrderPickingStarted':
    case 'FulfillmentDispatched':
    case 'CustodyTransferred':
    case 'FulfillmentDelivered':
    case 'DeliveryExceptionRaised':
    case 'DeliveryExceptionResolved':
    case 'FulfillmentReceived':
    case 'FulfillmentClosed': {
      // An exception closes by its id alone, whichever order the resolution names.
      if (event.type === 'DeliveryExceptionResolved') state.openDeliveryExceptions.delete(event.data.exceptionId);
      const order = state.orders.get(event.data.orderId);
      if (order === undefined) return;
      if (event.type === 'DeliveryExceptionRaised') {
        const d = event.data;
        state.openDeliveryExceptions.set(d.exceptionId, { exceptionId: d.exceptionId, orderId: d.orderId, reasonCode: d.reasonCode, detectedAt: at });
      } else if (event.type === 'FulfillmentReceived') {
        order.openDiscrepancies = { detectedAt: at, entries: event.data.discrepancies.map((entry) => ({ ...entry })) };
      } else if (event.type === 'FulfillmentClosed') {
        order.openDiscrepancies = undefined;
      }
      const milestone = milestoneOf[event.type];
      if (milestone !== undefined && !order.milestones.has(milestone)) {
        order.milestones.set(milestone, at);
        for (const stage of allCycleStages) {
          const from = stage.to === milestone ? order.milestones.get(stage.from) : undefined;
          if (from !== undefined) addCycleSample(state, stage.stage, at, Date.parse(at) - Date.parse(from));
        }
      }
      const status = orderStatusAfter(event);
      if (status !== undefined && status !== order.status) {
        order.pendingSince = status === 'pending_approval' ? at : undefined;
        order.status = status;
      }
      return;
    }
    default:
      return;
  }
}

function addCycleSample(state: AnalyticsFoldState, stage: CycleStage, toAt: string, durationMs: number): void {
  let days = state.cycleSamples.get(stage);
  if (days === undefined) {
    days = new Map();
    state.cycleSamples.set(stage, days);
  }
  const day = utcDate(toAt);
  const totals = days.get(day) ?? { totalMs: 0, samples: 0 };
  totals.totalMs += durationMs;
  totals.samples += 1;
  days.set(day, totals);
}

function boxContribution(box: BoxState): number {
  return box.status === usableBoxStatus ? box.onHand - box.reserved : 0;
}

/** The level of (item, warehouse), created (and indexed) the first time a box is there. */
function levelOf(state: AnalyticsFoldState, catalogItemId: string, warehouseId: string): StockLevelState {
  const key = levelKey(catalogItemId, warehouseId);
  let level = state.stockLevels.get(key);
  if (level === undefined) {
    level = { catalogItemId, warehouseId, available: 0, lowSince: undefined };
    state.stockLevels.set(key, level);
    addToIndex(state.levelsByItem, catalogItemId, level);
    addToIndex(state.levelsByWarehouse, warehouseId, level);
  }
  return level;
}

function addToIndex(index: Map<string, Set<StockLevelState>>, key: string, level: StockLevelState): void {
  let set = index.get(key);
  if (set === undefined) {
    set = new Set();
    index.set(key, set);
  }
  set.add(level);
}

/** Takes the box's contribution out of its level; returns that level. */
function withdraw(state: AnalyticsFoldState, box: BoxState): StockLevelState {
  const level = levelOf(state, box.catalogItemId, box.warehouseId);
  level.available -= boxContribution(box);
  return level;
}

/** Puts the box's contribution into its (current) level; returns that level. */
function deposit(state: AnalyticsFoldState, box: BoxState): StockLevelState {
  const level = levelOf(state, box.catalogItemId, box.warehouseId);
  level.available += boxContribution(box);
  return level;
}

/** After an event at `at`: a level that becomes low takes `at`; one that stops being low forgets. */
function reevaluate(state: AnalyticsFoldState, levels: Iterable<StockLevelState> | undefined, at: string): void {
  if (levels === undefined) return;
  for (const level of levels) {
    if (!isLevelLow(state, level)) level.lowSince = undefined;
    else if (level.lowSince === undefined) level.lowSince = at;
  }
}
