import { z } from 'zod';
import { code } from '../../src/events/primitives.js';
import { movementType } from '../../src/events/index.js';
import { responseTimestamp, storedId } from '../../src/events/responseFields.js';
import { storedInteger } from '../shared/storedInteger.js';

/** A ledger entry of a box, as GET /v1/inventory/boxes/{boxId}/movements lists it. */
export const stockMovementRow = z.object({
  movementId: storedId,
  type: movementType,
  boxId: storedId,
  catalogItemId: storedId,
  quantityDelta: storedInteger,
  actorId: storedId,
  /** When it happened physically. */
  occurredAt: responseTimestamp,
  /** When the event store accepted it. */
  recordedAt: responseTimestamp,
  reservedDelta: storedInteger.optional(),
  secondActorId: storedId.optional(),
  fromWarehouseId: storedId.optional(),
  toWarehouseId: storedId.optional(),
  reasonCode: code.optional(),
  idempotencyKey: code.optional(),
  correlationId: code.optional(),
  splitId: code.optional(),
});
export type StockMovement = z.output<typeof stockMovementRow>;
