import type { CommonQueryMethods } from 'slonik';
import { sql } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { clinicRow, warehouseRow, type ClinicRow, type WarehouseRow } from './schema.js';

/** Every clinic of the tenant, by id (byte order). */
export async function listClinics(db: CommonQueryMethods, tenantId: string): Promise<readonly ClinicRow[]> {
  return db.any(sql.type(clinicRow)`
    SELECT clinic_id AS "clinicId", name, status
    FROM read_models.clinics
    WHERE tenant_id = ${tenantId}
    ORDER BY clinic_id
  `);
}

/** Every warehouse of the tenant, by id (byte order). */
export async function listWarehouses(db: CommonQueryMethods, tenantId: string): Promise<readonly WarehouseRow[]> {
  return db.any(sql.type(withoutNullColumns(warehouseRow))`
    SELECT warehouse_id AS "warehouseId", name, kind, clinic_id AS "clinicId", status
    FROM read_models.warehouses
    WHERE tenant_id = ${tenantId}
    ORDER BY warehouse_id
  `);
}
