import { z } from 'zod';
import { boxStatus } from '../../src/events/index.js';
import { isoDate } from '../../src/events/primitives.js';
import { boxOrigin } from '../../src/events/stock.js';

/** int8 leaves the pool as a bigint; /v1 sends quantities as JSON numbers, which must stay exact. */
const quantity = z
  .bigint()
  .refine((value) => value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER), 'quantity beyond a safe integer')
  .transform(Number);

/** A box's quantities, as an element of GET /v1/inventory/balances and as GET …/boxes/{boxId}/balance. */
export const boxBalanceRow = z.object({
  boxId: z.string(),
  catalogItemId: z.string(),
  warehouseId: z.string(),
  onHand: quantity,
  reserved: quantity,
  available: quantity,
});
export type BoxBalance = z.output<typeof boxBalanceRow>;

/** One box (GET /v1/inventory/boxes/{boxId}): where it is, what it holds and where it came from. */
export const boxRow = z.object({
  boxId: z.string(),
  code: z.string(),
  catalogItemId: z.string(),
  warehouseId: z.string(),
  status: boxStatus,
  lot: z.string().optional(),
  serials: z.array(z.string()).optional(),
  expiresOn: isoDate.optional(),
  origin: boxOrigin,
});
export type Box = z.output<typeof boxRow>;
