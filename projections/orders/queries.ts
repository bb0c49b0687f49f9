import type { FragmentSqlToken } from 'slonik';
import type { z } from 'zod';
import type { OrderStatus } from '../../src/events/index.js';
import type { RowReader } from '../../src/platform/projectionReader.js';
import { sql, statementTemplate } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { guardCondition, statementsByGuard, type ReadGuard } from '../shared/readGuard.js';
import { changeFeed } from '../shared/changeFeed.js';
import { storedJsonOrColumns, storedJsonText } from '../shared/storedJson.js';
import { orderListColumnsRow, orderListItem, orderListRow, orderResponse, type OrderListRow, type OrderResponse } from './schema.js';

export type ListOrdersOptions = ReadGuard & {
  /** Creation sequence of the last order of the previous page. */
  readonly afterSeq?: bigint;
  readonly limit: number;
  readonly status?: OrderStatus;
};

/** Order list items come from item_json, or from the columns on a generation built before it. */
const fromStoredJson = storedJsonOrColumns();

/**
 * Orders of the tenant, oldest first by creation, after `afterSeq`: up to `limit + 1` rows, so
 * that the caller knows whether another page exists. Orders created later always sort last. Each
 * row's item is its stored JSON text (orders.item_json); on a generation built by the previous
 * definition of orders (version 1), the same text serialised here from the columns.
 */
export async function listOrders(db: RowReader, tenantId: string, options: ListOrdersOptions): Promise<readonly OrderListRow[]> {
  const { afterSeq = 0n, limit, status } = options;
  const byStatus = status !== undefined;
  const values = { tenantId, status: status ?? null, afterSeq, limit: limit + 1 };
  return fromStoredJson(
    () => db.rows(orderListStatement(options.guard, byStatus)(values), { fromColumns: orderListRowOfColumns }),
    async () => {
      const rows = await db.rows(orderListColumnsStatement(options.guard, byStatus)(values), { fromColumns: orderListItemOfColumns });
      return rows.map(({ seq, ...item }) => ({ seq, itemJson: JSON.stringify(item) }));
    },
  );
}

const orderListParameters = ['tenantId', 'status', 'afterSeq', 'limit'] as const;
const orderItemColumns = sql.fragment`order_id AS "orderId", number, type, status, requester_id AS "requesterId",
  clinic_id AS "clinicId", destination_warehouse_id AS "destinationWarehouseId", version`;

/** The order list statements for a guard, with or without the status filter, built once: stored JSON text, or the columns. */
const orderListStatement = statementsByGuard(
  (guard, byStatus: boolean) => orderListTemplate(orderListRow, sql.fragment`item_json AS "itemJson"`, guard, byStatus),
  (byStatus) => String(byStatus),
);
const orderListColumnsStatement = statementsByGuard(
  (guard, byStatus: boolean) => orderListTemplate(orderListColumnsRow, orderItemColumns, guard, byStatus),
  (byStatus) => String(byStatus),
);

function orderListTemplate<Row extends z.AnyZodObject>(row: Row, columns: FragmentSqlToken, guard: FragmentSqlToken | undefined, byStatus: boolean) {
  return statementTemplate(
    orderListParameters,
    (parameter) => sql.type(row)`
    SELECT creation_seq AS seq, ${columns}
    FROM read_models.orders
    WHERE tenant_id = ${parameter.tenantId} ${guardCondition(guard)}
      ${byStatus ? sql.fragment`AND status = ${parameter.status}` : sql.fragment``}
      AND creation_seq > ${parameter.afterSeq}
    ORDER BY creation_seq
    LIMIT ${parameter.limit}
  `,
  );
}

/** A row of the order list statement, from its values in column order. */
const orderListRowOfColumns = ([seq, itemJson]: readonly unknown[]) => ({ seq, itemJson }) as OrderListRow;

/** A row of the columns statement, from its values in column order. */
const orderListItemOfColumns = ([seq, orderId, number, type, status, requesterId, clinicId, destinationWarehouseId, version]: readonly unknown[]) =>
  ({ seq, orderId, number, type, status, requesterId, clinicId, destinationWarehouseId, version }) as z.infer<typeof orderListColumnsRow>;

/**
 * One order with its lines (in their original order) and approval plan; line cost only with
 * `includeCost`. Undefined when the tenant has no such order.
 */
export async function getOrder(
  db: RowReader,
  tenantId: string,
  orderId: string,
  options: ReadGuard & { readonly includeCost: boolean },
): Promise<OrderResponse | undefined> {
  const statement = orderStatement(options.guard, options.includeCost);
  const [order] = await db.rows(statement({ tenantId, orderId }), { nullMeansAbsent: true, fromColumns: orderOfColumns });
  return order;
}

/** An order row whose NULL columns are absent fields. */
const orderRow = withoutNullColumns(orderResponse);

/** A row of the order statement, from its values in column order. */
const orderOfColumns = ([orderId, number, type, status, requesterId, clinicId, destinationWarehouseId, preferredSourceWarehouseId, justification, lines, approvalPlan, version]: readonly unknown[]) =>
  ({ orderId, number, type, status, requesterId, clinicId, destinationWarehouseId, preferredSourceWarehouseId, justification, lines, approvalPlan, version }) as OrderResponse;

/** The order statement for a guard, with or without line cost, built once. */
const orderStatement = statementsByGuard(orderTemplate, (includeCost: boolean) => String(includeCost));

function orderTemplate(guard: FragmentSqlToken | undefined, includeCost: boolean) {
  const cost = includeCost ? sql.fragment`, 'unitCost', l.unit_cost, 'currency', l.currency` : sql.fragment``;
  return statementTemplate(
    ['tenantId', 'orderId'] as const,
    (parameter) => sql.type(orderRow)`
    SELECT o.order_id AS "orderId", o.number, o.type, o.status, o.requester_id AS "requesterId", o.clinic_id AS "clinicId",
      o.destination_warehouse_id AS "destinationWarehouseId", o.preferred_source_warehouse_id AS "preferredSourceWarehouseId",
      o.justification,
      coalesce((
        SELECT jsonb_agg(
          jsonb_strip_nulls(jsonb_build_object(
            'lineId', l.line_id, 'catalogItemId', l.catalog_item_id, 'sku', l.sku, 'name', l.name,
            'requestedQty', l.requested_qty, 'unitOfMeasure', l.unit_of_measure, 'category', l.category_id,
            'highValue', l.high_value ${cost}
          ))
          ORDER BY l.line_no
        )
        FROM read_models.order_lines AS l
        WHERE l.tenant_id = ${parameter.tenantId} AND l.order_id = o.order_id
      ), '[]'::jsonb) AS lines,
      o.approval_plan AS "approvalPlan", o.version
    FROM read_models.orders AS o
    WHERE o.tenant_id = ${parameter.tenantId} AND o.order_id = ${parameter.orderId} ${guardCondition(guard)}
  `,
  );
}

/**
 * The orders of the tenant changed after a position, by the log position of their last change
 * (changed_tx, changed_seq), each as its list item's stored JSON text.
 */
export const listOrderChanges = changeFeed({
  projection: 'orders',
  table: sql.identifier(['read_models', 'orders']),
  idColumn: sql.identifier(['order_id']),
  itemJson: sql.fragment`item_json`,
  itemText: storedJsonText(orderListItem),
});
