import { z } from 'zod';
import { sql } from '../../src/platform/sql.js';
import type { FoldContext, ProjectedEvent } from '../../src/projecting/projection.js';
import { rowKey } from '../../src/projecting/rowChanges.js';
import { boxRow, clinicRow, deliveryExceptionRow, itemRow, orderRow, stockLevelRow, warehouseRow } from './schema.js';
import { boxState, levelId, type AnalyticsState, type BoxState, type Table } from './state.js';

/** (tenant, id) pairs to read, each once. */
class Missing {
  private readonly byKey = new Map<string, readonly [string, string]>();

  get size(): number {
    return this.byKey.size;
  }

  add(tenantId: string, id: string): void {
    const key = rowKey(tenantId, id);
    if (!this.byKey.has(key)) this.byKey.set(key, [tenantId, id]);
  }

  pairs(): (readonly [string, string])[] {
    return [...this.byKey.values()];
  }
}

/** Marks the row used by this batch, or notes it to be read when the state does not hold it. */
function need(table: Table<{ changedIn: number; used: number }>, missing: Missing, tenantId: string, id: string, batch: number): void {
  const row = table.get(tenantId, id);
  if (row !== undefined) row.used = batch;
  else missing.add(tenantId, id);
}

type Wanted = {
  readonly boxes: Missing;
  readonly orders: Missing;
  readonly items: Missing;
  readonly warehouses: Missing;
  readonly clinics: Missing;
  readonly changedItems: Missing;
  readonly changedWarehouses: Missing;
  readonly levels: Map<string, readonly [string, string, string]>;
  readonly exceptions: Map<string, readonly [string, string, string]>;
  /** Box events whose level can only be known once their box is read (or registered in the batch). */
  readonly later: ProjectedEvent[];
  /** The item of each box the batch registers, by rowKey(tenant, box). */
  readonly registeredItems: Map<string, string>;
};

/** The level (tenant, item, warehouse) and, unless the state holds the level, its item and warehouse. */
function needLevel(state: AnalyticsState, wanted: Wanted, tenantId: string, catalogItemId: string, warehouseId: string): void {
  const id = levelId(catalogItemId, warehouseId);
  const level = state.levels.get(tenantId, id);
  if (level !== undefined) {
    level.used = state.batch;
    return;
  }
  wanted.levels.set(rowKey(tenantId, id), [tenantId, catalogItemId, warehouseId]);
  need(state.items, wanted.items, tenantId, catalogItemId, state.batch);
  need(state.warehouses, wanted.warehouses, tenantId, warehouseId, state.batch);
}

function needBoxLevel(state: AnalyticsState, wanted: Wanted, box: BoxState): void {
  const level = box.level;
  if (level !== undefined && !level.evicted) level.used = state.batch;
  else needLevel(state, wanted, box.tenantId, box.catalogItemId, box.warehouseId);
}

function needOrder(state: AnalyticsState, wanted: Wanted, tenantId: string, orderId: string): void {
  const order = state.orders.get(tenantId, orderId);
  if (order === undefined) return wanted.orders.add(tenantId, orderId);
  order.used = state.batch;
  need(state.clinics, wanted.clinics, tenantId, order.clinicId, state.batch);
}

/** What each event needs, from the state where it holds it (most events of a rebuild). */
function scan(events: readonly ProjectedEvent[], state: AnalyticsState): Wanted {
  const wanted: Wanted = {
    boxes: new Missing(),
    orders: new Missing(),
    items: new Missing(),
    warehouses: new Missing(),
    clinics: new Missing(),
    changedItems: new Missing(),
    changedWarehouses: new Missing(),
    levels: new Map(),
    exceptions: new Map(),
    later: [],
    registeredItems: new Map(),
  };
  const { batch } = state;
  for (const event of events) {
    const { tenantId } = event;
    switch (event.type) {
      case 'CatalogItemDefined':
      case 'CatalogItemRevised':
      case 'CatalogItemStatusChanged':
        wanted.changedItems.add(tenantId, event.data.itemId);
        break;
      case 'WarehouseOpened':
      case 'WarehouseStatusChanged':
        wanted.changedWarehouses.add(tenantId, event.data.warehouseId);
        break;
      case 'ClinicOpened':
      case 'ClinicRenamed':
      case 'ClinicStatusChanged':
        need(state.clinics, wanted.clinics, tenantId, event.data.clinicId, batch);
        break;
      case 'BoxRegistered':
        need(state.boxes, wanted.boxes, tenantId, event.data.boxId, batch);
        wanted.registeredItems.set(rowKey(tenantId, event.data.boxId), event.data.catalogItemId);
        needLevel(state, wanted, tenantId, event.data.catalogItemId, event.data.warehouseId);
        break;
      case 'BoxStatusChanged':
      case 'StockMovementRecorded': {
        const box = state.boxes.get(tenantId, event.data.boxId);
        if (box === undefined) {
          wanted.boxes.add(tenantId, event.data.boxId);
          wanted.later.push(event);
        } else {
          box.used = batch;
          needBoxLevel(state, wanted, box);
        }
        if (event.type === 'BoxStatusChanged') break;
        if (event.data.type === 'consume') need(state.items, wanted.items, tenantId, event.data.catalogItemId, batch);
        // A transfer's target level: the box's item is known once the box is.
        if (event.data.type === 'transfer' && event.data.toWarehouseId !== undefined && box !== undefined) wanted.later.push(event);
        break;
      }
      case 'OrderDrafted':
        needOrder(state, wanted, tenantId, event.data.orderId);
        need(state.clinics, wanted.clinics, tenantId, event.data.clinicId, batch);
        break;
      case 'DeliveryExceptionRaised':
      case 'DeliveryExceptionResolved': {
        const { orderId, exceptionId } = event.data;
        needOrder(state, wanted, tenantId, orderId);
        wanted.exceptions.set(rowKey(tenantId, orderId, exceptionId), [tenantId, orderId, exceptionId]);
        break;
      }
      default:
        if ('orderId' in event.data) needOrder(state, wanted, tenantId, event.data.orderId);
        break;
    }
  }
  return wanted;
}

/**
 * Reads into `state` every row the batch's events can touch that it does not hold yet, in three
 * rounds of one query per table: boxes and orders (by id); then the stock levels of those boxes,
 * of their transfer targets and of every item and warehouse the batch changes, the clinics, and
 * the delivery exceptions; then the items and warehouses of all those levels.
 */
export async function loadTouchedState(events: readonly ProjectedEvent[], state: AnalyticsState, { db, table }: FoldContext): Promise<void> {
  // The state holds every row there is: nothing to read, not even to look for.
  if (state.complete) return;
  const wanted = scan(events, state);
  const { batch } = state;

  // Round 1: boxes and orders.
  if (wanted.boxes.size > 0) {
    const rows = await db.any(sql.type(boxRow)`
      SELECT tenant_id AS "tenantId", box_id AS "boxId", catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId", status,
        on_hand::float8 AS "onHand", reserved::float8 AS reserved, to_char(expires_on, 'YYYY-MM-DD') AS "expiresOn"
      FROM ${table('analytics_boxes')}
      WHERE (tenant_id, box_id) IN (SELECT * FROM ${sql.unnest(wanted.boxes.pairs(), ['text', 'text'])})
    `);
    for (const row of rows) state.boxes.keep(row.tenantId, row.boxId, boxState(row, batch));
  }
  if (wanted.orders.size > 0) {
    const rows = await db.any(sql.type(orderRow)`
      SELECT tenant_id AS "tenantId", order_id AS "orderId", number, clinic_id AS "clinicId", status, pending_since AS "pendingSince",
        submitted_at AS "submittedAt", approved_at AS "approvedAt", dispatched_at AS "dispatchedAt", delivered_at AS "deliveredAt",
        received_at AS "receivedAt"
      FROM ${table('analytics_orders')}
      WHERE (tenant_id, order_id) IN (SELECT * FROM ${sql.unnest(wanted.orders.pairs(), ['text', 'text'])})
    `);
    for (const row of rows) {
      state.orders.keep(row.tenantId, row.orderId, { ...row, changedIn: 0, used: batch });
      need(state.clinics, wanted.clinics, row.tenantId, row.clinicId, batch);
    }
  }

  // Round 2: stock levels, clinics, delivery exceptions.
  for (const event of wanted.later) {
    if (event.type !== 'BoxStatusChanged' && event.type !== 'StockMovementRecorded') continue;
    const { tenantId } = event;
    const box = state.boxes.get(tenantId, event.data.boxId);
    if (box !== undefined) needBoxLevel(state, wanted, box);
    const itemId = box?.catalogItemId ?? wanted.registeredItems.get(rowKey(tenantId, event.data.boxId));
    if (event.type === 'StockMovementRecorded' && event.data.type === 'transfer' && event.data.toWarehouseId !== undefined && itemId !== undefined) {
      needLevel(state, wanted, tenantId, itemId, event.data.toWarehouseId);
    }
  }
  const { levels, changedItems, changedWarehouses } = wanted;
  if (levels.size > 0 || changedItems.size > 0 || changedWarehouses.size > 0) {
    const rows = await db.any(sql.type(stockLevelRow)`
      SELECT tenant_id AS "tenantId", catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId", available::float8 AS available,
        detected_at AS "detectedAt", priority
      FROM ${table('analytics_stock_levels')}
      WHERE (tenant_id, catalog_item_id, warehouse_id) IN (SELECT * FROM ${sql.unnest([...levels.values()], ['text', 'text', 'text'])})
      UNION
      SELECT tenant_id, catalog_item_id, warehouse_id, available::float8, detected_at, priority
      FROM ${table('analytics_stock_levels')}
      WHERE (tenant_id, catalog_item_id) IN (SELECT * FROM ${sql.unnest(changedItems.pairs(), ['text', 'text'])})
      UNION
      SELECT tenant_id, catalog_item_id, warehouse_id, available::float8, detected_at, priority
      FROM ${table('analytics_stock_levels')}
      WHERE (tenant_id, warehouse_id) IN (SELECT * FROM ${sql.unnest(changedWarehouses.pairs(), ['text', 'text'])})
    `);
    for (const row of rows) {
      // A level the state already holds is the same row: the state stays the reference.
      const held = state.levels.get(row.tenantId, levelId(row.catalogItemId, row.warehouseId));
      if (held !== undefined) {
        held.used = batch;
        continue;
      }
      state.keepLevel(row, false);
      need(state.items, wanted.items, row.tenantId, row.catalogItemId, batch);
      need(state.warehouses, wanted.warehouses, row.tenantId, row.warehouseId, batch);
    }
  }
  for (const [tenantId, itemId] of changedItems.pairs()) need(state.items, wanted.items, tenantId, itemId, batch);
  for (const [tenantId, warehouseId] of changedWarehouses.pairs()) need(state.warehouses, wanted.warehouses, tenantId, warehouseId, batch);

  if (wanted.clinics.size > 0) {
    const rows = await db.any(sql.type(clinicRow)`
      SELECT tenant_id AS "tenantId", clinic_id AS "clinicId", name, status, total_orders::float8 AS "totalOrders",
        pending_approval_orders::float8 AS "pendingApprovalOrders", pending_orders::float8 AS "pendingOrders"
      FROM ${table('analytics_clinics')}
      WHERE (tenant_id, clinic_id) IN (SELECT * FROM ${sql.unnest(wanted.clinics.pairs(), ['text', 'text'])})
    `);
    for (const row of rows) state.clinics.keep(row.tenantId, row.clinicId, { ...row, changedIn: 0, used: batch });
  }
  if (wanted.exceptions.size > 0) {
    const rows = await db.any(sql.type(deliveryExceptionRow)`
      SELECT tenant_id AS "tenantId", order_id AS "orderId", exception_id AS "exceptionId", order_number AS "orderNumber",
        reason_code AS "reasonCode", detected_at AS "detectedAt"
      FROM ${table('analytics_delivery_exceptions')}
      WHERE (tenant_id, order_id, exception_id) IN (SELECT * FROM ${sql.unnest([...wanted.exceptions.values()], ['text', 'text', 'text'])})
    `);
    for (const row of rows) {
      const key = rowKey(row.tenantId, row.orderId, row.exceptionId);
      state.exceptions.set(key, { ids: [row.tenantId, row.orderId, row.exceptionId], open: row });
      state.exceptionsBefore.add(key);
    }
  }

  // Round 3: items and warehouses.
  if (wanted.items.size > 0) {
    const rows = await db.any(sql.type(itemRow)`
      SELECT tenant_id AS "tenantId", item_id AS "itemId", name, unit_of_measure AS "unitOfMeasure", reorder_point::float8 AS "reorderPoint", status
      FROM ${table('analytics_items')}
      WHERE (tenant_id, item_id) IN (SELECT * FROM ${sql.unnest(wanted.items.pairs(), ['text', 'text'])})
    `);
    for (const row of rows) state.items.keep(row.tenantId, row.itemId, { ...row, changedIn: 0, used: batch });
  }
  if (wanted.warehouses.size > 0) {
    const rows = await db.any(sql.type(warehouseRow)`
      SELECT tenant_id AS "tenantId", warehouse_id AS "warehouseId", status
      FROM ${table('analytics_warehouses')}
      WHERE (tenant_id, warehouse_id) IN (SELECT * FROM ${sql.unnest(wanted.warehouses.pairs(), ['text', 'text'])})
    `);
    for (const row of rows) state.warehouses.keep(row.tenantId, row.warehouseId, { ...row, changedIn: 0, used: batch });
  }
}

/**
 * Whether the tables the state reads are empty (a rebuild's first batch): the state then holds
 * every row there is for as long as it drops none.
 */
export async function tablesEmpty({ db, table }: FoldContext): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ empty: z.boolean() }))`
    SELECT NOT (
      EXISTS (SELECT FROM ${table('analytics_items')}) OR EXISTS (SELECT FROM ${table('analytics_warehouses')})
      OR EXISTS (SELECT FROM ${table('analytics_clinics')}) OR EXISTS (SELECT FROM ${table('analytics_boxes')})
      OR EXISTS (SELECT FROM ${table('analytics_stock_levels')}) OR EXISTS (SELECT FROM ${table('analytics_orders')})
      OR EXISTS (SELECT FROM ${table('analytics_delivery_exceptions')})
    ) AS empty
  `);
}
