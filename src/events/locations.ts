import { z } from 'zod';
import { id, name } from './primitives.js';

export const clinicStatus = z.enum(['active', 'inactive', 'closed']);
export const warehouseKind = z.enum(['central', 'express']);
export const warehouseStatus = z.enum(['active', 'inactive', 'closed']);

/** Clinics (locations) and warehouses. An express warehouse belongs to one clinic. */
export const locationEvents = {
  ClinicOpened: z.object({ clinicId: id, name, status: clinicStatus }).strict(),
  ClinicRenamed: z.object({ clinicId: id, name }).strict(),
  ClinicStatusChanged: z.object({ clinicId: id, status: clinicStatus }).strict(),

  WarehouseOpened: z
    .object({
      warehouseId: id,
      name,
      kind: warehouseKind,
      clinicId: id.optional(),
      status: warehouseStatus,
    })
    .strict()
    .refine((w) => (w.kind === 'express') === (w.clinicId !== undefined), {
      message: 'an express warehouse belongs to exactly one clinic; a central one to none',
    }),
  WarehouseStatusChanged: z.object({ warehouseId: id, status: warehouseStatus }).strict(),
} as const;
