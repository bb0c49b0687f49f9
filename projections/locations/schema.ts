import { z } from 'zod';
import { clinicStatus, warehouseKind, warehouseStatus } from '../../src/events/index.js';

/** A clinic as /v1 returns it. */
export const clinicRow = z.object({
  clinicId: z.string(),
  name: z.string(),
  status: clinicStatus,
});
export type ClinicRow = z.infer<typeof clinicRow>;

/** A warehouse as /v1 returns it; `clinicId` only for an express warehouse. */
export const warehouseRow = z.object({
  warehouseId: z.string(),
  name: z.string(),
  kind: warehouseKind,
  clinicId: z.string().optional(),
  status: warehouseStatus,
});
export type WarehouseRow = z.infer<typeof warehouseRow>;
