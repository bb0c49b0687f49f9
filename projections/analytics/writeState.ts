import type { QuerySqlToken } from 'slonik';
import { sql } from '../../src/platform/sql.js';
import { recordset } from '../shared/recordset.js';
import type { ProjectionContext, TableResolver } from '../../src/projecting/projection.js';
import type { AnalyticsState } from './state.js';
import type { DeliveryExceptionRow } from './schema.js';

/** One statement per table the batch changed (two for the tables it deletes from). */
export async function writeState(state: AnalyticsState, { db, table }: ProjectionContext): Promise<void> {
  for (const statement of writeStatements(state, table)) await db.query(statement);
}

function writeStatements(state: AnalyticsState, table: TableResolver): QuerySqlToken[] {
  const statements: QuerySqlToken[] = [];
  const items = state.items.changed;
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
  const warehouses = state.warehouses.changed;
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
  const clinics = state.clinics.changed;
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
  const boxes = state.boxes.changed;
  if (boxes.length > 0) {
    const rows = boxes.map((b) => ({ t: b.tenantId, b: b.boxId, i: b.catalogItemId, w: b.warehouseId, s: b.status, o: b.onHand, r: b.reserved, e: b.expiresOn, x: b.expiringOn }));
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_boxes')} (tenant_id, box_id, catalog_item_id, warehouse_id, status, on_hand, reserved, expires_on, expiring_on)
      SELECT t, b, i, w, s, o, r, e, x FROM json_to_recordset(${recordset(rows)}) AS x(t text, b text, i text, w text, s text, o int8, r int8, e date, x date)
      ON CONFLICT (tenant_id, box_id) DO UPDATE
      SET warehouse_id = excluded.warehouse_id, status = excluded.status, on_hand = excluded.on_hand, reserved = excluded.reserved,
        expiring_on = excluded.expiring_on
    `);
  }
  const levels = state.levels.changed;
  if (levels.length > 0) {
    const rows = levels.map((l) => ({ t: l.tenantId, i: l.catalogItemId, w: l.warehouseId, a: l.available, d: l.detectedAt, p: l.priority }));
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_stock_levels')} (tenant_id, catalog_item_id, warehouse_id, available, detected_at, priority)
      SELECT t, i, w, a, d, p FROM json_to_recordset(${recordset(rows)}) AS x(t text, i text, w text, a int8, d timestamptz, p int2)
      ON CONFLICT (tenant_id, catalog_item_id, warehouse_id) DO UPDATE
      SET available = excluded.available, detected_at = excluded.detected_at, priority = excluded.priority
    `);
  }
  const orders = state.orders.changed;
  if (orders.length > 0) {
    statements.push(sql.typeAlias('void')`
      INSERT INTO ${table('analytics_orders')} (
        tenant_id, order_id, number, clinic_id, status, pending_since, submitted_at, approved_at, dispatched_at, delivered_at, received_at
      )
      SELECT t, o, n, c, s, p, u, a, d, v, r
      FROM json_to_recordset(${recordset(
        orders.map((o) => ({
          t: o.tenantId,
          o: o.orderId,
          n: o.number,
          c: o.clinicId,
          s: o.status,
          p: o.pendingSince,
          u: o.submittedAt,
          a: o.approvedAt,
          d: o.dispatchedAt,
          v: o.deliveredAt,
          r: o.receivedAt,
        })),
      )}) AS x(t text, o text, n int4, c text, s text, p timestamptz, u timestamptz, a timestamptz, d timestamptz, v timestamptz, r timestamptz)
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
      SELECT t, i, u, d, q, m
      FROM json_to_recordset(${recordset(consumption.map((c) => ({ t: c.tenantId, i: c.catalogItemId, u: c.unit, d: c.day, q: c.quantity, m: c.movements })))})
        AS x(t text, i text, u text, d date, q int8, m int8)
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
