import { z } from 'zod';
import { movementType } from '../../src/events/index.js';
import { isoTimestamp } from '../../src/events/primitives.js';
import { storedInteger } from '../shared/storedInteger.js';

/** A ledger entry of a box, as GET /v1/inventory/boxes/{boxId}/movements lists it. */
export const stockMovementRow = z.object({
  movementId: z.string(),
  type: movementType,
  boxId: z.string(),
  catalogItemId: z.string(),
  quantityDelta: storedInteger,
  actorId: z.string(),
  /** When it happened physically. */
  occurredAt: isoTimestamp,
  /** When the event store accepted it. */
  recordedAt: isoTimestamp,
  reservedDelta: storedInteger.optional(),
  secondActorId: z.string().optional(),
  fromWarehouseId: z.string().optional(),
  toWarehouseId: z.string().optional(),
  reasonCode: z.string().optional(),
  idempotencyKey: z.string().optional(),
  correlationId: z.string().optional(),
  splitId: z.string().optional(),
});
export type StockMovement = z.output<typeof stockMovementRow>;
