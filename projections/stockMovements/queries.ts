import type { CommonQueryMethods } from 'slonik';
import { sql } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { stockMovementRow, type StockMovement } from './schema.js';

/** Every movement of one box of the tenant, oldest first by occurredAt, ties in log order. */
export async function listBoxMovements(db: CommonQueryMethods, tenantId: string, boxId: string): Promise<readonly StockMovement[]> {
  return db.any(sql.type(withoutNullColumns(stockMovementRow))`
    SELECT movement_id AS "movementId", type, box_id AS "boxId", catalog_item_id AS "catalogItemId",
      quantity_delta::float8 AS "quantityDelta", actor_id AS "actorId", occurred_at AS "occurredAt", recorded_at AS "recordedAt",
      reserved_delta::float8 AS "reservedDelta", second_actor_id AS "secondActorId", from_warehouse_id AS "fromWarehouseId",
      to_warehouse_id AS "toWarehouseId", reason_code AS "reasonCode", idempotency_key AS "idempotencyKey",
      correlation_id AS "correlationId", split_id AS "splitId"
    FROM read_models.stock_movements
    WHERE tenant_id = ${tenantId} AND box_id = ${boxId}
    ORDER BY occurred_at, position_tx, position_seq
  `);
}
