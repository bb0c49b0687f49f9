import { expiryIgnoredBoxStatuses, type CycleStage } from '../../src/analytics/definitions.js';
import { sql } from '../../src/platform/sql.js';
import type { ProjectedEvent, ProjectionContext } from '../../src/projecting/projection.js';
import { rowKey } from '../../src/projecting/rowChanges.js';
import { boxRow, clinicRow, deliveryExceptionRow, itemRow, orderRow, stockLevelRow, warehouseRow } from './schema.js';
import type { BoxRow, ClinicRow, DeliveryExceptionRow, ItemRow, OrderRow, StockLevelRow, WarehouseRow } from './schema.js';

// ── batch state ─────────────────────────────────────────────────────────────────────────────────

export type Discrepancy = {
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

export type BatchState = {
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
export async function loadTouchedState(events: readonly ProjectedEvent[], { db, table }: ProjectionContext): Promise<BatchState> {
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

export function indexLevel(state: BatchState, level: StockLevelRow, created: boolean): string {
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

/** The expiry date while the box counts for EXPIRING_STOCK, else null. */
export function expiringOn(box: Pick<BoxRow, 'expiresOn' | 'onHand' | 'status'>): string | null {
  if (box.expiresOn === null || box.onHand <= 0 || expiryIgnoredBoxStatuses.includes(box.status)) return null;
  return box.expiresOn;
}
