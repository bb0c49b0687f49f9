import { z } from 'zod';
import { code, maxSerialsPerBox } from '../../src/events/primitives.js';
import { boxStatus } from '../../src/events/index.js';
import { boxOrigin } from '../../src/events/stock.js';
import { responseDate, storedId } from '../../src/events/responseFields.js';
import { storedInteger } from '../shared/storedInteger.js';
import { storedJsonText } from '../shared/storedJson.js';

/** A box's quantities, as an element of GET /v1/inventory/balances and as GET …/boxes/{boxId}/balance. */
export const boxBalanceRow = z.object({
  boxId: storedId,
  catalogItemId: storedId,
  warehouseId: storedId,
  onHand: storedInteger,
  reserved: storedInteger,
  available: storedInteger,
});
export type BoxBalance = z.output<typeof boxBalanceRow>;

/** One entry of the balances list: the box id (the keyset position) and its balance as JSON text. */
export const boxBalanceEntryRow = z.object({ boxId: storedId, balance: storedJsonText(boxBalanceRow) });
export type BoxBalanceEntry = z.output<typeof boxBalanceEntryRow>;

/** One box (GET /v1/inventory/boxes/{boxId}): where it is, what it holds and where it came from. */
export const boxRow = z.object({
  boxId: storedId,
  code,
  catalogItemId: storedId,
  warehouseId: storedId,
  status: boxStatus,
  lot: code.optional(),
  serials: z.array(code).max(maxSerialsPerBox).optional(),
  expiresOn: responseDate.optional(),
  origin: boxOrigin,
});
export type Box = z.output<typeof boxRow>;
