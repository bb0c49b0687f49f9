import type { QuerySqlToken } from 'slonik';
import {
  allCycleStages,
  expiryIgnoredBoxStatuses,
  lowStockPriority,
  pendingOrderStatuses,
  usableBoxStatus,
  utcDate,
  type CycleMilestone,
  type CycleStage,
} from '../../src/analytics/definitions.js';
import type { OrderStatus } from '../../src/events/index.js';
import { orderStatusAfter } from '../../src/events/orderStatusTransitions.js';
import { sql } from '../../src/platform/sql.js';
import {
  ProjectionInvariantError,
  type ProjectedEvent,
  type Projection,
  type ProjectionContext,
  type TableDefinition,
  type TableResolver,
} from '../../src/projecting/projection.js';
import { rowKey } from '../../src/projecting/rowChanges.js';
import { boxRow, clinicRow, deliveryExceptionRow, itemRow, orderRow, stockLevelRow, warehouseRow } from './schema.js';
import type { BoxRow, ClinicRow, DeliveryExceptionRow, ItemRow, OrderRow, StockLevelRow, WarehouseRow } from './schema.js';

/**
 * The analytics aggregates of every tenant (see src/analytics/definitions.ts for what each figure
 * means). The projection keeps its own copy of every state a figure depends on, so that its
 * checkpoint alone describes the figures: it never reads another projection's tables.
 *
 * A batch loads the rows its events touch (a few queries, whatever the batch size), folds the
 * events in log order in memory, and writes each table back with one multi-row statement.
 */

const tables: readonly TableDefinition[] = [
  {
    name: 'analytics_items',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_items')} (
          tenant_id text COLLATE "C" NOT NULL,
          item_id text COLLATE "C" NOT NULL,
          name text NOT NULL,
          unit_of_measure text NOT NULL,
          reorder_point bigint NOT NULL,
          status text NOT NULL,
          PRIMARY KEY (tenant_id, item_id)
        )
      `,
    ],
  },
  {
    name: 'analytics_warehouses',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_warehouses')} (
          tenant_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          PRIMARY KEY (tenant_id, warehouse_id)
        )
      `,
    ],
  },
  {
    name: 'analytics_clinics',
    create: (table) => [
      // name and status stay null until ClinicOpened: orders may name a clinic before it opens.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_clinics')} (
          tenant_id text COLLATE "C" NOT NULL,
          clinic_id text COLLATE "C" NOT NULL,
          name text,
          status text,
          total_orders bigint NOT NULL,
          pending_approval_orders bigint NOT NULL,
          pending_orders bigint NOT NULL,
          PRIMARY KEY (tenant_id, clinic_id)
        )
      `,
    ],
    // The clinic comparison: opened clinics by id.
    deferredIndexes: (table) => [sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_clinics')} (tenant_id, clinic_id) WHERE name IS NOT NULL`],
  },
  {
    name: 'analytics_boxes',
    create: (table) => [
      // expiring_on: expires_on while the box counts for EXPIRING_STOCK (onHand > 0, status not
      // ignored), null otherwise.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_boxes')} (
          tenant_id text COLLATE "C" NOT NULL,
          box_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          on_hand bigint NOT NULL,
          reserved bigint NOT NULL,
          expires_on date,
          expiring_on date,
          PRIMARY KEY (tenant_id, box_id)
        )
      `,
    ],
    // EXPIRING_STOCK and its exceptions, in report order (expiry date, then box id).
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_boxes')} (tenant_id, expiring_on, box_id) WHERE expiring_on IS NOT NULL`,
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_boxes')} (tenant_id, catalog_item_id, expiring_on, box_id) WHERE expiring_on IS NOT NULL`,
    ],
  },
  {
    name: 'analytics_stock_levels',
    create: (table) => [
      // detected_at and priority are set exactly while the level is low.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_stock_levels')} (
          tenant_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          available bigint NOT NULL,
          detected_at timestamptz,
          priority smallint,
          PRIMARY KEY (tenant_id, catalog_item_id, warehouse_id)
        )
      `,
      // A warehouse status change re-evaluates every level of the warehouse.
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_stock_levels')} (tenant_id, warehouse_id, catalog_item_id)`,
    ],
    // LOW_STOCK and its exceptions, in report order.
    deferredIndexes: (table) => [
      sql.typeAlias('void')`
        CREATE INDEX ON ${table('analytics_stock_levels')} (tenant_id, priority DESC, detected_at, catalog_item_id, warehouse_id)
        WHERE priority IS NOT NULL
      `,
      sql.typeAlias('void')`
        CREATE INDEX ON ${table('analytics_stock_levels')} (tenant_id, catalog_item_id, priority DESC, detected_at, warehouse_id)
        WHERE priority IS NOT NULL
      `,
    ],
  },
  {
    name: 'analytics_orders',
    create: (table) => [
      // pending_since is set exactly while the order is pending_approval.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_orders')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          number integer NOT NULL,
          clinic_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          pending_since timestamptz,
          submitted_at timestamptz,
          approved_at timestamptz,
          dispatched_at timestamptz,
          delivered_at timestamptz,
          received_at timestamptz,
          PRIMARY KEY (tenant_id, order_id)
        )
      `,
    ],
    // APPROVAL_BACKLOG and the approvals of the exceptions report, oldest first.
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_orders')} (tenant_id, pending_since, order_id) WHERE pending_since IS NOT NULL`,
    ],
  },
  {
    name: 'analytics_consumption_daily',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_consumption_daily')} (
          tenant_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          unit text COLLATE "C" NOT NULL,
          day date NOT NULL,
          quantity bigint NOT NULL,
          movements bigint NOT NULL,
          PRIMARY KEY (tenant_id, catalog_item_id, unit, day)
        )
      `,
    ],
  },
  {
    name: 'analytics_cycle_stages_daily',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_cycle_stages_daily')} (
          tenant_id text COLLATE "C" NOT NULL,
          day date NOT NULL,
          stage text COLLATE "C" NOT NULL,
          samples bigint NOT NULL,
          total_ms bigint NOT NULL,
          PRIMARY KEY (tenant_id, day, stage)
        )
      `,
    ],
  },
  {
    name: 'analytics_delivery_exceptions',
    create: (table) => [
      // Open exceptions only: a resolved one is deleted.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_delivery_exceptions')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          exception_id text COLLATE "C" NOT NULL,
          order_number integer NOT NULL,
          reason_code text NOT NULL,
          detected_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, order_id, exception_id)
        )
      `,
    ],
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_delivery_exceptions')} (tenant_id, detected_at, order_id, exception_id)`,
    ],
  },
  {
    name: 'analytics_receipt_discrepancies',
    create: (table) => [
      // Open discrepancies only: entry_no is the position in FulfillmentReceived.discrepancies.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_receipt_discrepancies')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          entry_no integer NOT NULL,
          order_number integer NOT NULL,
          line_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          expected_qty bigint NOT NULL,
          received_qty bigint NOT NULL,
          reason_code text COLLATE "C" NOT NULL,
          detected_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, order_id, entry_no)
        )
      `,
    ],
    deferredIndexes: (table) => [
      sql.typeAlias('void')`
        CREATE INDEX ON ${table('analytics_receipt_discrepancies')} (tenant_id, detected_at, order_id, line_id, reason_code, entry_no)
      `,
    ],
  },
];

const handledEvents = [
  'CatalogItemDefined',
  'CatalogItemRevised',
  'CatalogItemStatusChanged',
  'ClinicOpened',
  'ClinicRenamed',
  'ClinicStatusChanged',
  'WarehouseOpened',
  'WarehouseStatusChanged',
  'BoxRegistered',
  'BoxStatusChanged',
  'StockMovementRecorded',
  'OrderDrafted',
  'OrderSubmitted',
  'OrderApprovalRequested',
  'OrderApproved',
  'OrderRejected',
  'OrderCancelled',
  'OrderAllocated',
  'OrderPickingStarted',
  'FulfillmentDispatched',
  'DeliveryExceptionRaised',
  'DeliveryExceptionResolved',
  'FulfillmentDelivered',
  'FulfillmentReceived',
  'FulfillmentClosed',
] as const;

/** The figures of src/analytics/definitions.ts, kept per tenant from the events alone. */
export const analyticsProjection: Projection = {
  name: 'analytics',
  version: 1,
  tables,
  handles: handledEvents,
  apply: async (events, context) => {
    const state = await loadTouchedState(events, context);
    for (const event of events) foldEvent(event, state);
    await writeState(state, context);
  },
};

// ── batch state ─────────────────────────────────────────────────────────────────────────────────

type Discrepancy = {
  lineId: string;
  catalogItemId: string;
  expectedQty: number;
  receivedQty: number;
  reasonCode: string;
};

type ConsumptionDelta = { tenantId: string; catalogItemId: string; unit: string; day: string; quantity: number; movements: number };
type CycleDelta = { tenantId: string; day: string; stage: CycleStage; samples: number; totalMs: number };

/** A table's rows as the batch sees them: loaded or created, with the keys the batch changed. */
class Rows<Row> {
  readonly rows = new Map<string, Row>();
  readonly dirty = new Set<string>();

  get(key: string): Row | undefined {
    return this.rows.get(key);
  }

  set(key: string, row: Row): void {
    this.rows.set(key, row);
    this.dirty.add(key);
  }

  touch(key: string): void {
    this.dirty.add(key);
  }

  changed(): Row[] {
    const rows: Row[] = [];
    for (const key of this.dirty) {
      const row = this.rows.get(key);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }
}

type BatchState = {
  readonly items: Rows<ItemRow>;
  readonly warehouses: Rows<WarehouseRow>;
  readonly clinics: Rows<ClinicRow>;
  readonly boxes: Rows<BoxRow & { expiringOn: string | null }>;
  readonly levels: Rows<StockLevelRow>;
  /** Level keys by rowKey(tenant, item) and by rowKey(tenant, warehouse), for re-evaluation. */
  readonly levelsByItem: Map<string, Set<string>>;
  readonly levelsByWarehouse: Map<string, Set<string>>;
  readonly orders: Rows<OrderRow>;
  /** Delivery exceptions the batch touched: the open row, or null once resolved. */
  readonly exceptions: Map<string, { readonly ids: readonly [string, string, string]; open: DeliveryExceptionRow | null }>;
  /** Keys of the touched exceptions that were open before the batch. */
  readonly exceptionsBefore: Set<string>;
  /** Orders whose discrepancies the batch replaced (received) or removed (closed): the final list. */
  readonly discrepancies: Map<string, { tenantId: string; orderId: string; orderNumber: number; detectedAt: string; entries: Discrepancy[] }>;
  readonly consumption: Map<string, ConsumptionDelta>;
  readonly cycles: Map<string, CycleDelta>;
};

// ── loading ─────────────────────────────────────────────────────────────────────────────────────

type IdKeys = Map<string, readonly [string, string]>;

function addKey(keys: IdKeys, tenantId: string, id: string): void {
  keys.set(rowKey(tenantId, id), [tenantId, id]);
}

/**
 * Loads every row the batch's events can touch, in three rounds of one query per table: boxes and
 * orders (by id); then the stock levels of those boxes, of their transfer targets and of every
 * item and warehouse the batch changes, the clinics, and the delivery exceptions; then the items
 * and warehouses of all those levels.
 */
async function loadTouchedState(events: readonly ProjectedEvent[], { db, table }: ProjectionContext): Promise<BatchState> {
  const boxIds: IdKeys = new Map();
  const orderIds: IdKeys = new Map();
  const itemIds: IdKeys = new Map();
  const warehouseIds: IdKeys = new Map();
  const clinicIds: IdKeys = new Map();
  const changedItems: IdKeys = new Map();
  const changedWarehouses: IdKeys = new Map();
  const exceptionKeys = new Map<string, readonly [string, string, string]>();
  const registeredItems = new Map<string, string>();

  for (const event of events) {
    const { tenantId } = event;
    switch (event.type) {
      case 'CatalogItemDefined':
      case 'CatalogItemRevised':
      case 'CatalogItemStatusChanged':
        addKey(changedItems, tenantId, event.data.itemId);
        break;
      case 'WarehouseOpened':
      case 'WarehouseStatusChanged':
        addKey(changedWarehouses, tenantId, event.data.warehouseId);
        break;
      case 'ClinicOpened':
      case 'ClinicRenamed':
      case 'ClinicStatusChanged':
        addKey(clinicIds, tenantId, event.data.clinicId);
        break;
      case 'BoxRegistered':
        addKey(boxIds, tenantId, event.data.boxId);
        registeredItems.set(rowKey(tenantId, event.data.boxId), event.data.catalogItemId);
        break;
      case 'BoxStatusChanged':
        addKey(boxIds, tenantId, event.data.boxId);
        break;
      case 'StockMovementRecorded':
        addKey(boxIds, tenantId, event.data.boxId);
        if (event.data.type === 'consume') addKey(itemIds, tenantId, event.data.catalogItemId);
        break;
      case 'OrderDrafted':
        addKey(orderIds, tenantId, event.data.orderId);
        addKey(clinicIds, tenantId, event.data.clinicId);
        break;
      case 'DeliveryExceptionRaised':
      case 'DeliveryExceptionResolved': {
        const { orderId, exceptionId } = event.data;
        addKey(orderIds, tenantId, orderId);
        exceptionKeys.set(rowKey(tenantId, orderId, exceptionId), [tenantId, orderId, exceptionId]);
        break;
      }
      default:
        if ('orderId' in event.data) addKey(orderIds, tenantId, event.data.orderId);
        break;
    }
  }

  const state: BatchState = {
    items: new Rows(),
    warehouses: new Rows(),
    clinics: new Rows(),
    boxes: new Rows(),
    levels: new Rows(),
    levelsByItem: new Map(),
    levelsByWarehouse: new Map(),
    orders: new Rows(),
    exceptions: new Map(),
    exceptionsBefore: new Set(),
    discrepancies: new Map(),
    consumption: new Map(),
    cycles: new Map(),
  };

  // Round 1: boxes and orders.
  if (boxIds.size > 0) {
    const rows = await db.any(sql.type(boxRow)`
      SELECT tenant_id AS "tenantId", box_id AS "boxId", catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId", status,
        on_hand::float8 AS "onHand", reserved::float8 AS reserved, to_char(expires_on, 'YYYY-MM-DD') AS "expiresOn"
      FROM ${table('analytics_boxes')}
      WHERE (tenant_id, box_id) IN (SELECT * FROM ${sql.unnest([...boxIds.values()], ['text', 'text'])})
    `);
    for (const row of rows) state.boxes.rows.set(rowKey(row.tenantId, row.boxId), { ...row, expiringOn: expiringOn(row) });
  }
  if (orderIds.size > 0) {
    const rows = await db.any(sql.type(orderRow)`
      SELECT tenant_id AS "tenantId", order_id AS "orderId", number, clinic_id AS "clinicId", status, pending_since AS "pendingSince",
        submitted_at AS "submittedAt", approved_at AS "approvedAt", dispatched_at AS "dispatchedAt", delivered_at AS "deliveredAt",
        received_at AS "receivedAt"
      FROM ${table('analytics_orders')}
      WHERE (tenant_id, order_id) IN (SELECT * FROM ${sql.unnest([...orderIds.values()], ['text', 'text'])})
    `);
    for (const row of rows) {
      state.orders.rows.set(rowKey(row.tenantId, row.orderId), row);
      addKey(clinicIds, row.tenantId, row.clinicId);
    }
  }

  // Round 2: stock levels, clinics, delivery exceptions.
  const levelKeys = new Map<string, readonly [string, string, string]>();
  const addLevel = (tenantId: string, itemId: string, warehouseId: string): void => {
    levelKeys.set(rowKey(tenantId, itemId, warehouseId), [tenantId, itemId, warehouseId]);
  };
  for (const event of events) {
    if (event.type === 'BoxRegistered') {
      addLevel(event.tenantId, event.data.catalogItemId, event.data.warehouseId);
    } else if (event.type === 'BoxStatusChanged' || event.type === 'StockMovementRecorded') {
      const key = rowKey(event.tenantId, event.data.boxId);
      const box = state.boxes.get(key);
      if (box !== undefined) addLevel(event.tenantId, box.catalogItemId, box.warehouseId);
      const itemId = box?.catalogItemId ?? registeredItems.get(key);
      if (event.type === 'StockMovementRecorded' && event.data.type === 'transfer' && event.data.toWarehouseId !== undefined && itemId !== undefined) {
        addLevel(event.tenantId, itemId, event.data.toWarehouseId);
      }
    }
  }
  if (levelKeys.size > 0 || changedItems.size > 0 || changedWarehouses.size > 0) {
    const rows = await db.any(sql.type(stockLevelRow)`
      SELECT tenant_id AS "tenantId", catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId", available::float8 AS available,
        detected_at AS "detectedAt", priority
      FROM ${table('analytics_stock_levels')}
      WHERE (tenant_id, catalog_item_id, warehouse_id) IN (SELECT * FROM ${sql.unnest([...levelKeys.values()], ['text', 'text', 'text'])})
      UNION
      SELECT tenant_id, catalog_item_id, warehouse_id, available::float8, detected_at, priority
      FROM ${table('analytics_stock_levels')}
      WHERE (tenant_id, catalog_item_id) IN (SELECT * FROM ${sql.unnest([...changedItems.values()], ['text', 'text'])})
      UNION
      SELECT tenant_id, catalog_item_id, warehouse_id, available::float8, detected_at, priority
      FROM ${table('analytics_stock_levels')}
      WHERE (tenant_id, warehouse_id) IN (SELECT * FROM ${sql.unnest([...changedWarehouses.values()], ['text', 'text'])})
    `);
    for (const row of rows) indexLevel(state, row, false);
  }
  for (const [tenantId, itemId, warehouseId] of levelKeys.values()) {
    addKey(itemIds, tenantId, itemId);
    addKey(warehouseIds, tenantId, warehouseId);
  }
  for (const level of state.levels.rows.values()) {
    addKey(itemIds, level.tenantId, level.catalogItemId);
    addKey(warehouseIds, level.tenantId, level.warehouseId);
  }
  for (const [key, ids] of changedItems) itemIds.set(key, ids);
  for (const [key, ids] of changedWarehouses) warehouseIds.set(key, ids);

  if (clinicIds.size > 0) {
    const rows = await db.any(sql.type(clinicRow)`
      SELECT tenant_id AS "tenantId", clinic_id AS "clinicId", name, status, total_orders::float8 AS "totalOrders",
        pending_approval_orders::float8 AS "pendingApprovalOrders", pending_orders::float8 AS "pendingOrders"
      FROM ${table('analytics_clinics')}
      WHERE (tenant_id, clinic_id) IN (SELECT * FROM ${sql.unnest([...clinicIds.values()], ['text', 'text'])})
    `);
    for (const row of rows) state.clinics.rows.set(rowKey(row.tenantId, row.clinicId), row);
  }
  if (exceptionKeys.size > 0) {
    const rows = await db.any(sql.type(deliveryExceptionRow)`
      SELECT tenant_id AS "tenantId", order_id AS "orderId", exception_id AS "exceptionId", order_number AS "orderNumber",
        reason_code AS "reasonCode", detected_at AS "detectedAt"
      FROM ${table('analytics_delivery_exceptions')}
      WHERE (tenant_id, order_id, exception_id) IN (SELECT * FROM ${sql.unnest([...exceptionKeys.values()], ['text', 'text', 'text'])})
    `);
    for (const row of rows) {
      const key = rowKey(row.tenantId, row.orderId, row.exceptionId);
      state.exceptions.set(key, { ids: [row.tenantId, row.orderId, row.exceptionId], open: row });
      state.exceptionsBefore.add(key);
    }
  }

  // Round 3: items and warehouses.
  if (itemIds.size > 0) {
    const rows = await db.any(sql.type(itemRow)`
      SELECT tenant_id AS "tenantId", item_id AS "itemId", name, unit_of_measure AS "unitOfMeasure", reorder_point::float8 AS "reorderPoint", status
      FROM ${table('analytics_items')}
      WHERE (tenant_id, item_id) IN (SELECT * FROM ${sql.unnest([...itemIds.values()], ['text', 'text'])})
    `);
    for (const row of rows) state.items.rows.set(rowKey(row.tenantId, row.itemId), row);
  }
  if (warehouseIds.size > 0) {
    const rows = await db.any(sql.type(warehouseRow)`
      SELECT tenant_id AS "tenantId", warehouse_id AS "warehouseId", status
      FROM ${table('analytics_warehouses')}
      WHERE (tenant_id, warehouse_id) IN (SELECT * FROM ${sql.unnest([...warehouseIds.values()], ['text', 'text'])})
    `);
    for (const row of rows) state.warehouses.rows.set(rowKey(row.tenantId, row.warehouseId), row);
  }
  return state;
}

function indexLevel(state: BatchState, level: StockLevelRow, created: boolean): string {
  const key = rowKey(level.tenantId, level.catalogItemId, level.warehouseId);
  if (created) state.levels.set(key, level);
  else state.levels.rows.set(key, level);
  const byItem = rowKey(level.tenantId, level.catalogItemId);
  const byWarehouse = rowKey(level.tenantId, level.warehouseId);
  let items = state.levelsByItem.get(byItem);
  if (items === undefined) state.levelsByItem.set(byItem, (items = new Set()));
  items.add(key);
  let warehouses = state.levelsByWarehouse.get(byWarehouse);
  if (warehouses === undefined) state.levelsByWarehouse.set(byWarehouse, (warehouses = new Set()));
  warehouses.add(key);
  return key;
}

// ── folding ─────────────────────────────────────────────────────────────────────────────────────

/** The expiry date while the box counts for EXPIRING_STOCK, else null. */
function expiringOn(box: Pick<BoxRow, 'expiresOn' | 'onHand' | 'status'>): string | null {
  if (box.expiresOn === null || box.onHand <= 0 || expiryIgnoredBoxStatuses.includes(box.status)) return null;
  return box.expiresOn;
}

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

function foldEvent(event: ProjectedEvent, state: BatchState): void {
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
      const box = { tenantId, boxId, catalogItemId, warehouseId, status, onHand: 0, reserved: 0, expiresOn: expiresOn ?? null };
      state.boxes.set(key, { ...box, expiringOn: expiringOn(box) });
      const level = ensureLevel(state, tenantId, catalogItemId, warehouseId);
      reevaluateLevels(state, [level], occurredAt);
      return;
    }
    case 'BoxStatusChanged':
    case 'StockMovementRecorded': {
      const { boxId } = event.data;
      const key = rowKey(tenantId, boxId);
      const before = requireRow(state.boxes.get(key), event.type, `box ${tenantId}/${boxId}`);
      const after = { ...before };
      if (event.type === 'BoxStatusChanged') {
        after.status = event.data.status;
      } else {
        const movement = event.data;
        after.onHand += movement.quantityDelta;
        after.reserved += movement.reservedDelta ?? 0;
        if (movement.type === 'transfer' && movement.toWarehouseId !== undefined) after.warehouseId = movement.toWarehouseId;
        if (movement.type === 'consume') recordConsumption(state, event.tenantId, movement.catalogItemId, movement.occurredAt, -movement.quantityDelta);
      }
      after.expiringOn = expiringOn(after);
      state.boxes.set(key, after);
      const from = ensureLevel(state, tenantId, before.catalogItemId, before.warehouseId);
      const to = ensureLevel(state, tenantId, after.catalogItemId, after.warehouseId);
      addAvailable(state, from, -usable(before));
      addAvailable(state, to, usable(after));
      reevaluateLevels(state, from === to ? [from] : [from, to], occurredAt);
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

function ensureLevel(state: BatchState, tenantId: string, catalogItemId: string, warehouseId: string): string {
  const key = rowKey(tenantId, catalogItemId, warehouseId);
  if (state.levels.get(key) !== undefined) return key;
  return indexLevel(state, { tenantId, catalogItemId, warehouseId, available: 0, detectedAt: null, priority: null }, true);
}

function addAvailable(state: BatchState, key: string, delta: number): void {
  if (delta === 0) return;
  const level = requireRow(state.levels.get(key), 'stock change', `stock level ${key.replaceAll('\u0000', '/')}`);
  state.levels.set(key, { ...level, available: level.available + delta });
}

/**
 * LOW_STOCK of each level after an event that changed its boxes, its item or its warehouse: a
 * level that becomes low takes the event's time, one that stays low keeps its time.
 */
function reevaluateLevels(state: BatchState, keys: Iterable<string> | undefined, occurredAt: string): void {
  for (const key of keys ?? []) {
    const level = state.levels.get(key);
    if (level === undefined) continue;
    const item = state.items.get(rowKey(level.tenantId, level.catalogItemId));
    const warehouse = state.warehouses.get(rowKey(level.tenantId, level.warehouseId));
    const low = item?.status === 'active' && warehouse?.status === 'active' && level.available < item.reorderPoint;
    const next: StockLevelRow = low
      ? { ...level, detectedAt: level.detectedAt ?? occurredAt, priority: lowStockPriority(level.available) }
      : { ...level, detectedAt: null, priority: null };
    if (next.detectedAt !== level.detectedAt || next.priority !== level.priority) state.levels.set(key, next);
  }
}

function recordConsumption(state: BatchState, tenantId: string, catalogItemId: string, movementOccurredAt: string, quantity: number): void {
  // A consume movement of an item not yet defined is not counted (it has no unit of measure).
  const item = state.items.get(rowKey(tenantId, catalogItemId));
  if (item === undefined) return;
  const day = utcDate(movementOccurredAt);
  const key = rowKey(tenantId, catalogItemId, item.unitOfMeasure, day);
  const entry = state.consumption.get(key);
  if (entry === undefined) state.consumption.set(key, { tenantId, catalogItemId, unit: item.unitOfMeasure, day, quantity, movements: 1 });
  else {
    entry.quantity += quantity;
    entry.movements += 1;
  }
}

/** A stage sample for each stage that `milestone` ends and whose start the order has reached. */
function recordCycleSamples(state: BatchState, order: OrderRow, milestone: CycleMilestone, occurredAt: string): void {
  for (const stage of allCycleStages) {
    if (stage.to !== milestone) continue;
    const from = order[milestoneColumn[stage.from]];
    if (from === null) continue;
    const day = utcDate(occurredAt);
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

function changeClinicCounters(state: BatchState, order: OrderRow, from: OrderStatus, to: OrderStatus): void {
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
  state: BatchState,
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

// ── writing ─────────────────────────────────────────────────────────────────────────────────────

/** One statement per table the batch changed (two for the tables it deletes from). */
async function writeState(state: BatchState, { db, table }: ProjectionContext): Promise<void> {
  for (const statement of writeStatements(state, table)) await db.query(statement);
}

function writeStatements(state: BatchState, table: TableResolver): QuerySqlToken[] {
  const statements: QuerySqlToken[] = [];
  const items = state.items.changed();
  if (items.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_items')} (tenant_id, item_id, name, unit_of_measure, reorder_point, status)
      SELECT * FROM ${sql.unnest(
        items.map((i) => [i.tenantId, i.itemId, i.name, i.unitOfMeasure, i.reorderPoint, i.status]),
        ['text', 'text', 'text', 'text', 'int8', 'text'],
      )}
      ON CONFLICT (tenant_id, item_id) DO UPDATE
      SET name = excluded.name, unit_of_measure = excluded.unit_of_measure, reorder_point = excluded.reorder_point, status = excluded.status
    `);
  }
  const warehouses = state.warehouses.changed();
  if (warehouses.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_warehouses')} (tenant_id, warehouse_id, status)
      SELECT * FROM ${sql.unnest(
        warehouses.map((w) => [w.tenantId, w.warehouseId, w.status]),
        ['text', 'text', 'text'],
      )}
      ON CONFLICT (tenant_id, warehouse_id) DO UPDATE SET status = excluded.status
    `);
  }
  const clinics = state.clinics.changed();
  if (clinics.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_clinics')} (tenant_id, clinic_id, name, status, total_orders, pending_approval_orders, pending_orders)
      SELECT * FROM ${sql.unnest(
        clinics.map((c) => [c.tenantId, c.clinicId, c.name, c.status, c.totalOrders, c.pendingApprovalOrders, c.pendingOrders]),
        ['text', 'text', 'text', 'text', 'int8', 'int8', 'int8'],
      )}
      ON CONFLICT (tenant_id, clinic_id) DO UPDATE
      SET name = excluded.name, status = excluded.status, total_orders = excluded.total_orders,
        pending_approval_orders = excluded.pending_approval_orders, pending_orders = excluded.pending_orders
    `);
  }
  const boxes = state.boxes.changed();
  if (boxes.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_boxes')} (tenant_id, box_id, catalog_item_id, warehouse_id, status, on_hand, reserved, expires_on, expiring_on)
      SELECT * FROM ${sql.unnest(
        boxes.map((b) => [b.tenantId, b.boxId, b.catalogItemId, b.warehouseId, b.status, b.onHand, b.reserved, b.expiresOn, b.expiringOn]),
        ['text', 'text', 'text', 'text', 'text', 'int8', 'int8', 'date', 'date'],
      )}
      ON CONFLICT (tenant_id, box_id) DO UPDATE
      SET warehouse_id = excluded.warehouse_id, status = excluded.status, on_hand = excluded.on_hand, reserved = excluded.reserved,
        expiring_on = excluded.expiring_on
    `);
  }
  const levels = state.levels.changed();
  if (levels.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_stock_levels')} (tenant_id, catalog_item_id, warehouse_id, available, detected_at, priority)
      SELECT * FROM ${sql.unnest(
        levels.map((l) => [l.tenantId, l.catalogItemId, l.warehouseId, l.available, l.detectedAt, l.priority]),
        ['text', 'text', 'text', 'int8', 'timestamptz', 'int2'],
      )}
      ON CONFLICT (tenant_id, catalog_item_id, warehouse_id) DO UPDATE
      SET available = excluded.available, detected_at = excluded.detected_at, priority = excluded.priority
    `);
  }
  const orders = state.orders.changed();
  if (orders.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_orders')} (
        tenant_id, order_id, number, clinic_id, status, pending_since, submitted_at, approved_at, dispatched_at, delivered_at, received_at
      )
      SELECT * FROM ${sql.unnest(
        orders.map((o) => [
          o.tenantId,
          o.orderId,
          o.number,
          o.clinicId,
          o.status,
          o.pendingSince,
          o.submittedAt,
          o.approvedAt,
          o.dispatchedAt,
          o.deliveredAt,
          o.receivedAt,
        ]),
        ['text', 'text', 'int4', 'text', 'text', 'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz'],
      )}
      ON CONFLICT (tenant_id, order_id) DO UPDATE
      SET status = excluded.status, pending_since = excluded.pending_since, submitted_at = excluded.submitted_at,
        approved_at = excluded.approved_at, dispatched_at = excluded.dispatched_at, delivered_at = excluded.delivered_at,
        received_at = excluded.received_at
    `);
  }
  const consumption = [...state.consumption.values()];
  if (consumption.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_consumption_daily')} AS c (tenant_id, catalog_item_id, unit, day, quantity, movements)
      SELECT * FROM ${sql.unnest(
        consumption.map((c) => [c.tenantId, c.catalogItemId, c.unit, c.day, c.quantity, c.movements]),
        ['text', 'text', 'text', 'date', 'int8', 'int8'],
      )}
      ON CONFLICT (tenant_id, catalog_item_id, unit, day) DO UPDATE
      SET quantity = c.quantity + excluded.quantity, movements = c.movements + excluded.movements
    `);
  }
  const cycles = [...state.cycles.values()];
  if (cycles.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_cycle_stages_daily')} AS s (tenant_id, day, stage, samples, total_ms)
      SELECT * FROM ${sql.unnest(
        cycles.map((c) => [c.tenantId, c.day, c.stage, c.samples, c.totalMs]),
        ['text', 'date', 'text', 'int8', 'int8'],
      )}
      ON CONFLICT (tenant_id, day, stage) DO UPDATE
      SET samples = s.samples + excluded.samples, total_ms = s.total_ms + excluded.total_ms
    `);
  }
  const closed: (readonly [string, string, string])[] = [];
  const open: DeliveryExceptionRow[] = [];
  for (const [key, exception] of state.exceptions) {
    if (exception.open !== null) open.push(exception.open);
    else if (state.exceptionsBefore.has(key)) closed.push(exception.ids);
  }
  if (closed.length > 0) {
    statements.push(sql.typeAlias('void')`
      DELETE FROM ${table('analytics_delivery_exceptions')}
      WHERE (tenant_id, order_id, exception_id) IN (SELECT * FROM ${sql.unnest(closed, ['text', 'text', 'text'])})
    `);
  }
  if (open.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_delivery_exceptions')} (tenant_id, order_id, exception_id, order_number, reason_code, detected_at)
      SELECT * FROM ${sql.unnest(
        open.map((e) => [e.tenantId, e.orderId, e.exceptionId, e.orderNumber, e.reasonCode, e.detectedAt]),
        ['text', 'text', 'text', 'int4', 'text', 'timestamptz'],
      )}
      ON CONFLICT (tenant_id, order_id, exception_id) DO UPDATE
      SET reason_code = excluded.reason_code, detected_at = excluded.detected_at
    `);
  }
  const replaced = [...state.discrepancies.values()];
  if (replaced.length > 0) {
    statements.push(sql.typeAlias('void')`
      DELETE FROM ${table('analytics_receipt_discrepancies')}
      WHERE (tenant_id, order_id) IN (SELECT * FROM ${sql.unnest(
        replaced.map((r) => [r.tenantId, r.orderId]),
        ['text', 'text'],
      )})
    `);
    const entries = replaced.flatMap((r) =>
      r.entries.map((d, index) => [
        r.tenantId,
        r.orderId,
        index + 1,
        r.orderNumber,
        d.lineId,
        d.catalogItemId,
        d.expectedQty,
        d.receivedQty,
        d.reasonCode,
        r.detectedAt,
      ]),
    );
    if (entries.length > 0) {
      statements.push(sql.typeAlias('void')`
        INSERT INTO ${table('analytics_receipt_discrepancies')} (
          tenant_id, order_id, entry_no, order_number, line_id, catalog_item_id, expected_qty, received_qty, reason_code, detected_at
        )
        SELECT * FROM ${sql.unnest(entries, ['text', 'text', 'int4', 'int4', 'text', 'text', 'int8', 'int8', 'text', 'timestamptz'])}
      `);
    }
  }
  return statements;
}
