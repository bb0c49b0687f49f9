import { z } from 'zod';
import { code, id, isoDate, isoTimestamp, maxSerialsPerBox, quantity } from './primitives.js';

export const boxStatus = z.enum(['active', 'quarantined', 'depleted', 'expired', 'disposed']);

/**
 * Movement types of the append-only box ledger. `receive` adds stock; `consume` uses it in a
 * clinic; `issue` takes reserved stock out for an order; `transfer` moves the box between
 * warehouses; `adjust` corrects a count; `reserve`/`release` change the reserved quantity only;
 * `dispose` writes stock off (expired, damaged); `return` brings issued stock back.
 */
export const movementType = z.enum(['receive', 'consume', 'issue', 'transfer', 'adjust', 'reserve', 'release', 'dispose', 'return']);

export const boxOrigin = z
  .object({
    type: z.enum(['purchase', 'order', 'transfer', 'count']),
    reference: code.optional(),
  })
  .strict();

/** A stock box (a physical container of one catalog item in one warehouse) and its ledger. */
export const stockEvents = {
  BoxRegistered: z
    .object({
      boxId: id,
      code,
      catalogItemId: id,
      warehouseId: id,
      status: boxStatus,
      lot: code.optional(),
      serials: z.array(code).max(maxSerialsPerBox).optional(),
      expiresOn: isoDate.optional(),
      origin: boxOrigin,
    })
    .strict(),
  BoxStatusChanged: z.object({ boxId: id, status: boxStatus, reasonCode: code.optional() }).strict(),

  /** One ledger entry. `occurredAt` is when it happened physically; the event's own time is when it was recorded. */
  StockMovementRecorded: z
    .object({
      movementId: id,
      type: movementType,
      boxId: id,
      catalogItemId: id,
      quantityDelta: quantity,
      reservedDelta: quantity.optional(),
      actorId: id,
      /** The second member who witnessed a high-value movement (v1: `secondActorId`). */
      witnessId: id.optional(),
      fromWarehouseId: id.optional(),
      toWarehouseId: id.optional(),
      reasonCode: code.optional(),
      idempotencyKey: code.optional(),
      correlationId: code.optional(),
      splitId: code.optional(),
      occurredAt: isoTimestamp,
    })
    .strict()
    .refine((m) => m.type !== 'transfer' || (m.fromWarehouseId !== undefined && m.toWarehouseId !== undefined), {
      message: 'a transfer names both warehouses',
    }),
} as const;
