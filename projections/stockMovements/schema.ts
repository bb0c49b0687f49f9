import { z } from 'zod';
import { movementType } from '../../src/events/index.js';
import { isoTimestamp } from '../../src/events/primitives.js';

/** int8 leaves the pool as a bigint; /v1 sends quantities as JSON numbers, which must stay exact. */
const quantity = z
  .bigint()
  .refine((value) => value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER), 'quantity beyond a safe integer')
  .transform(Number);

/** A ledger entry of a box, as GET /v1/inventory/boxes/{boxId}/movements lists it. */
export const stockMovementRow = z.object({
  movementId: z.string(),
  type: movementType,
  boxId: z.string(),
  catalogItemId: z.string(),
  quantityDelta: quantity,
  actorId: z.string(),
  /** When it happened physically. */
  occurredAt: isoTimestamp,
  /** When the event store accepted it. */
  recordedAt: isoTimestamp,
  reservedDelta: quantity.optional(),
  secondActorId: z.string().optional(),
  fromWarehouseId: z.string().optional(),
  toWarehouseId: z.string().optional(),
  reasonCode: z.string().optional(),
  idempotencyKey: z.string().optional(),
  correlationId: z.string().optional(),
  splitId: z.string().optional(),
});
export type StockMovement = z.output<typeof stockMovementRow>;
