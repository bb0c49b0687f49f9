import { z } from 'zod';
import { boxStatus } from '../../src/events/index.js';
import { isoDate } from '../../src/events/primitives.js';
import { boxOrigin } from '../../src/events/stock.js';
import { storedInteger } from '../shared/storedInteger.js';

/** A box's quantities, as an element of GET /v1/inventory/balances and as GET …/boxes/{boxId}/balance. */
export const boxBalanceRow = z.object({
  boxId: z.string(),
  catalogItemId: z.string(),
  warehouseId: z.string(),
  onHand: storedInteger,
  reserved: storedInteger,
  available: storedInteger,
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
