import { z } from 'zod';
import { name } from '../../src/events/primitives.js';
import { clinicStatus, warehouseKind, warehouseStatus } from '../../src/events/index.js';
import { storedId } from '../../src/events/responseFields.js';

/** A clinic as /v1 returns it. */
export const clinicRow = z.object({
  clinicId: storedId,
  name,
  status: clinicStatus,
});
export type ClinicRow = z.infer<typeof clinicRow>;

/** A warehouse as /v1 returns it; `clinicId` only for an express warehouse. */
export const warehouseRow = z.object({
  warehouseId: storedId,
  name,
  kind: warehouseKind,
  clinicId: storedId.optional(),
  status: warehouseStatus,
});
export type WarehouseRow = z.infer<typeof warehouseRow>;
