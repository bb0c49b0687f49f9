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

/**
 * A table's rows as the batch sees them: loaded or created, with the keys the batch changed. During
 * a rebuild the rows outlive the batch (AnalyticsState.settle), so that the next batch reads only
 * the rows it has not seen yet.
 */
class Rows<Row> {
  readonly rows = new Map<string, Row>();
  readonly dirty = new Set<string>();

  get(key: string): Row | undefined {
    return this.rows.get(key);
  }

  has(key: string): boolean {
    return this.rows.has(key);
  }

  set(key: string, row: Row): void {
    this.rows.set(key, row);
    this.dirty.add(key);
  }

  /** The row under `key` was changed in place. */
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

  /** After the batch is written: nothing is dirty; the rows stay unless there are more than `capacity`. */
  settle(capacity: number): boolean {
    this.dirty.clear();
    if (this.rows.size <= capacity) return false;
    this.rows.clear();
    return true;
  }
}

/**
 * The row keys a box and a level refer to, kept on them (not columns): the same key strings serve
 * every event of a replay instead of being built again for each lookup.
 */
export type BoxState = BoxRow & { expiringOn: string | null; levelKey: string };
export type LevelState = StockLevelRow & { readonly itemKey: string; readonly warehouseKey: string };

export function boxState(box: BoxRow): BoxState {
  return { ...box, expiringOn: expiringOn(box), levelKey: rowKey(box.tenantId, box.catalogItemId, box.warehouseId) };
}

type DiscrepancyList = { tenantId: string; orderId: string; orderNumber: number; detectedAt: string; entries: Discrepancy[] };

/**
 * The rows a batch reads and changes. A live batch starts from an empty state and loads what its
 * events touch; a rebuild keeps one state for the whole log (the tables are its own and every
 * batch it wrote has committed), bounded by `rowsKept` rows a table.
 */
export class AnalyticsState {
  readonly items = new Rows<ItemRow>();
  readonly warehouses = new Rows<WarehouseRow>();
  readonly clinics = new Rows<ClinicRow>();
  readonly boxes = new Rows<BoxState>();
  readonly levels = new Rows<LevelState>();
  /** Level keys by rowKey(tenant, item) and by rowKey(tenant, warehouse), for re-evaluation. */
  readonly levelsByItem = new Map<string, Set<string>>();
  readonly levelsByWarehouse = new Map<string, Set<string>>();
  readonly orders = new Rows<OrderRow>();
  /** Delivery exceptions the batch touched: the open row, or null once resolved. */
  exceptions = new Map<string, { readonly ids: readonly [string, string, string]; open: DeliveryExceptionRow | null }>();
  /** Keys of the touched exceptions that were open before the batch. */
  exceptionsBefore = new Set<string>();
  /** Orders whose discrepancies the batch replaced (received) or removed (closed): the final list. */
  discrepancies = new Map<string, DiscrepancyList>();
  consumption = new Map<string, ConsumptionDelta>();
  cycles = new Map<string, CycleDelta>();

  // A bound below the boxes of a long log: the memory of a rebuild must not grow with the log
  // (a full table is dropped and read back as the batches touch it again).
  constructor(private readonly rowsKept = 20_000) {}

  /**
   * After the batch is written: the per-batch changes go, the rows stay up to the bound. A level
   * in the state always has its item and warehouse beside it (when they exist), so those three
   * are dropped together.
   */
  settle(): void {
    this.clinics.settle(this.rowsKept);
    this.boxes.settle(this.rowsKept);
    this.orders.settle(this.rowsKept);
    const levels = this.levels.settle(this.rowsKept);
    const items = this.items.settle(this.rowsKept);
    const warehouses = this.warehouses.settle(this.rowsKept);
    if (levels || items || warehouses) {
      this.levels.rows.clear();
      this.items.rows.clear();
      this.warehouses.rows.clear();
      this.levelsByItem.clear();
      this.levelsByWarehouse.clear();
    }
    this.exceptions = new Map();
    this.exceptionsBefore = new Set();
    this.discrepancies = new Map();
    this.consumption = new Map();
    this.cycles = new Map();
  }
}

// ── loading ─────────────────────────────────────────────────────────────────────────────────────

type IdKeys = Map<string, readonly [string, string]>;

function addKey(keys: IdKeys, tenantId: string, id: string): void {
  keys.set(rowKey(tenantId, id), [tenantId, id]);
}

/** Keys the state does not hold yet, to be read from the table. */
function addMissing(keys: IdKeys, known: { has(key: string): boolean }, tenantId: string, id: string): void {
  const key = rowKey(tenantId, id);
  if (!known.has(key)) keys.set(key, [tenantId, id]);
}

/**
 * Reads into `state` every row the batch's events can touch that it does not hold yet, in three
 * rounds of one query per table: boxes and orders (by id); then the stock levels of those boxes,
 * of their transfer targets and of every item and warehouse the batch changes, the clinics, and
 * the delivery exceptions; then the items and warehouses of all those levels.
 */
export async function loadTouchedState(events: readonly ProjectedEvent[], state: AnalyticsState, { db, table }: ProjectionContext): Promise<void> {
  const boxIds: IdKeys = new Map();
  const orderKeys = new Set<string>();
  const orderIds: IdKeys = new Map();
  const itemIds: IdKeys = new Map();
  const warehouseIds: IdKeys = new Map();
  const clinicIds: IdKeys = new Map();
  const changedItems: IdKeys = new Map();
  const changedWarehouses: IdKeys = new Map();
  const exceptionKeys = new Map<string, readonly [string, string, string]>();
  const registeredItems = new Map<string, string>();
  const touchOrder = (tenantId: string, orderId: string): void => {
    const key = rowKey(tenantId, orderId);
    orderKeys.add(key);
    if (!state.orders.has(key)) orderIds.set(key, [tenantId, orderId]);
  };

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
        addMissing(clinicIds, state.clinics, tenantId, event.data.clinicId);
        break;
      case 'BoxRegistered':
        addMissing(boxIds, state.boxes, tenantId, event.data.boxId);
        registeredItems.set(rowKey(tenantId, event.data.boxId), event.data.catalogItemId);
        break;
      case 'BoxStatusChanged':
        addMissing(boxIds, state.boxes, tenantId, event.data.boxId);
        break;
      case 'StockMovementRecorded':
        addMissing(boxIds, state.boxes, tenantId, event.data.boxId);
        if (event.data.type === 'consume') addMissing(itemIds, state.items, tenantId, event.data.catalogItemId);
        break;
      case 'OrderDrafted':
        touchOrder(tenantId, event.data.orderId);
        addMissing(clinicIds, state.clinics, tenantId, event.data.clinicId);
        break;
      case 'DeliveryExceptionRaised':
      case 'DeliveryExceptionResolved': {
        const { orderId, exceptionId } = event.data;
        touchOrder(tenantId, orderId);
        exceptionKeys.set(rowKey(tenantId, orderId, exceptionId), [tenantId, orderId, exceptionId]);
        break;
      }
      default:
        if ('orderId' in event.data) touchOrder(tenantId, event.data.orderId);
        break;
    }
  }

  // Round 1: boxes and orders.
  if (boxIds.size > 0) {
    const rows = await db.any(sql.type(boxRow)`
      SELECT tenant_id AS "tenantId", box_id AS "boxId", catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId", status,
        on_hand::float8 AS "onHand", reserved::float8 AS reserved, to_char(expires_on, 'YYYY-MM-DD') AS "expiresOn"
      FROM ${table('analytics_boxes')}
      WHERE (tenant_id, box_id) IN (SELECT * FROM ${sql.unnest([...boxIds.values()], ['text', 'text'])})
    `);
    for (const row of rows) state.boxes.rows.set(rowKey(row.tenantId, row.boxId), boxState(row));
  }
  if (orderIds.size > 0) {
    const rows = await db.any(sql.type(orderRow)`
      SELECT tenant_id AS "tenantId", order_id AS "orderId", number, clinic_id AS "clinicId", status, pending_since AS "pendingSince",
        submitted_at AS "submittedAt", approved_at AS "approvedAt", dispatched_at AS "dispatchedAt", delivered_at AS "deliveredAt",
        received_at AS "receivedAt"
      FROM ${table('analytics_orders')}
      WHERE (tenant_id, order_id) IN (SELECT * FROM ${sql.unnest([...orderIds.values()], ['text', 'text'])})
    `);
    for (const row of rows) state.orders.rows.set(rowKey(row.tenantId, row.orderId), row);
  }
  for (const key of orderKeys) {
    const order = state.orders.get(key);
    if (order !== undefined) addMissing(clinicIds, state.clinics, order.tenantId, order.clinicId);
  }

  // Round 2: stock levels, clinics, delivery exceptions.
  const levelKeys = new Map<string, readonly [string, string, string]>();
  const addLevel = (tenantId: string, itemId: string, warehouseId: string, key = rowKey(tenantId, itemId, warehouseId)): void => {
    if (state.levels.has(key)) return;
    levelKeys.set(key, [tenantId, itemId, warehouseId]);
    addMissing(itemIds, state.items, tenantId, itemId);
    addMissing(warehouseIds, state.warehouses, tenantId, warehouseId);
  };
  for (const event of events) {
    if (event.type === 'BoxRegistered') {
      addLevel(event.tenantId, event.data.catalogItemId, event.data.warehouseId);
    } else if (event.type === 'BoxStatusChanged' || event.type === 'StockMovementRecorded') {
      const key = rowKey(event.tenantId, event.data.boxId);
      const box = state.boxes.get(key);
      if (box !== undefined) addLevel(event.tenantId, box.catalogItemId, box.warehouseId, box.levelKey);
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
    for (const row of rows) {
      // A level the state already holds is the same row: the state stays the reference.
      if (state.levels.has(rowKey(row.tenantId, row.catalogItemId, row.warehouseId))) continue;
      indexLevel(state, row, false);
      addMissing(itemIds, state.items, row.tenantId, row.catalogItemId);
      addMissing(warehouseIds, state.warehouses, row.tenantId, row.warehouseId);
    }
  }
  for (const [key, ids] of changedItems) if (!state.items.has(key)) itemIds.set(key, ids);
  for (const [key, ids] of changedWarehouses) if (!state.warehouses.has(key)) warehouseIds.set(key, ids);

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
}

export function indexLevel(state: AnalyticsState, row: StockLevelRow, created: boolean): string {
  const key = rowKey(row.tenantId, row.catalogItemId, row.warehouseId);
  const byItem = rowKey(row.tenantId, row.catalogItemId);
  const byWarehouse = rowKey(row.tenantId, row.warehouseId);
  const level: LevelState = { ...row, itemKey: byItem, warehouseKey: byWarehouse };
  if (created) state.levels.set(key, level);
  else state.levels.rows.set(key, level);
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
