import type { CommonQueryMethods } from 'slonik';
import { sql } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { changeFeed } from '../shared/changeFeed.js';
import { storedJsonText } from '../shared/storedJson.js';
import { fulfillmentListItem, fulfillmentListRow, fulfillmentResponse, type FulfillmentListRow, type FulfillmentResponse, type FulfillmentStatus } from './schema.js';

export type ListFulfillmentsOptions = {
  /** Creation sequence of the last record of the previous page. */
  readonly afterSeq?: bigint;
  readonly limit: number;
  readonly status?: FulfillmentStatus;
};

/**
 * Delivery records of the tenant, oldest first by dispatch, after `afterSeq`: up to `limit + 1`
 * rows, so that the caller knows whether another page exists. New records always sort last.
 */
export async function listFulfillments(db: CommonQueryMethods, tenantId: string, options: ListFulfillmentsOptions): Promise<readonly FulfillmentListRow[]> {
  const { afterSeq = 0n, limit, status } = options;
  const rows = await db.any(sql.type(fulfillmentListRow)`
    SELECT creation_seq AS seq, order_id AS "orderId", fulfillment_id AS "fulfillmentId", status,
      source_warehouse_id AS "sourceWarehouseId", destination_warehouse_id AS "destinationWarehouseId",
      dispatched_at AS "dispatchedAt", updated_at AS "updatedAt"
    FROM read_models.fulfillments
    WHERE tenant_id = ${tenantId}
      ${status === undefined ? sql.fragment`` : sql.fragment`AND status = ${status}`}
      AND creation_seq > ${afterSeq}
    ORDER BY creation_seq
    LIMIT ${limit + 1}
  `);
  return rows.map(({ seq, ...item }) => ({ seq, item }));
}

/**
 * The custody history of one order: movements oldest first, and delivery, receipt and closure once
 * they exist. Undefined when the tenant has no delivery record for the order.
 */
export async function getFulfillment(db: CommonQueryMethods, tenantId: string, orderId: string): Promise<FulfillmentResponse | undefined> {
  const fulfillment = await db.maybeOne(sql.type(withoutNullColumns(fulfillmentResponse))`
    SELECT f.order_id AS "orderId", f.fulfillment_id AS "fulfillmentId", f.status, f.updated_at AS "updatedAt",
      coalesce(
        (
          SELECT jsonb_agg(
            jsonb_strip_nulls(jsonb_build_object(
              'custodyMovementId', c.custody_movement_id, 'type', c.type, 'fromActorId', c.from_actor_id,
              'toActorId', c.to_actor_id, 'location', c.location,
              'occurredAt', to_char(c.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
            ))
            ORDER BY c.occurred_at, c.movement_no
          )
          FROM read_models.fulfillment_custody AS c
          WHERE c.tenant_id = ${tenantId} AND c.order_id = f.order_id
        ),
        '[]'::jsonb
      ) AS movements,
      f.delivery, f.receipt, f.closure, f.exceptions
    FROM read_models.fulfillments AS f
    WHERE f.tenant_id = ${tenantId} AND f.order_id = ${orderId}
  `);
  return fulfillment ?? undefined;
}

/** A timestamp column as the API writes it (UTC, milliseconds, Z), quoted as a JSON string. */
const jsonTimestamp = (column: string) => sql.fragment`json_quote(to_char(${sql.identifier([column])} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * The delivery records of the tenant changed after a position, by the log position of their last
 * change (changed_tx, changed_seq), each as the JSON text of its list item (the keys in the
 * order of fulfillmentListItem, as JSON.stringify writes them).
 */
export const listFulfillmentChanges = changeFeed({
  projection: 'fulfillments',
  table: sql.identifier(['read_models', 'fulfillments']),
  idColumn: sql.identifier(['order_id']),
  itemJson: sql.fragment`
    '{"orderId":' || json_quote(order_id) || ',"fulfillmentId":' || json_quote(fulfillment_id) || ',"status":' || json_quote(status) ||
    ',"sourceWarehouseId":' || json_quote(source_warehouse_id) || ',"destinationWarehouseId":' || json_quote(destination_warehouse_id) ||
    ',"dispatchedAt":' || ${jsonTimestamp('dispatched_at')} || ',"updatedAt":' || ${jsonTimestamp('updated_at')} || '}'
  `,
  itemText: storedJsonText(fulfillmentListItem),
});
