import { sql } from '../../src/platform/sql.js';
import { inMemoryFolding, expectRowCount, type Projection, type ProjectedEvent, type ProjectionContext, type TableDefinition } from '../../src/projecting/projection.js';
import { RowChanges } from '../../src/projecting/rowChanges.js';

type ClinicRecord = {
  tenantId: string;
  clinicId: string;
  name: string;
  status: string;
  updatedAt: string;
};

type ClinicPatch = Pick<ClinicRecord, 'tenantId' | 'clinicId' | 'updatedAt'> & Partial<Pick<ClinicRecord, 'name' | 'status'>>;

type WarehouseRecord = {
  tenantId: string;
  warehouseId: string;
  name: string;
  kind: string;
  clinicId: string | null;
  status: string;
  updatedAt: string;
};

type WarehousePatch = Pick<WarehouseRecord, 'tenantId' | 'warehouseId' | 'status' | 'updatedAt'>;

const tables: readonly TableDefinition[] = [
  {
    name: 'clinics',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('clinics')} (
          tenant_id text COLLATE "C" NOT NULL,
          clinic_id text COLLATE "C" NOT NULL,
          name text NOT NULL,
          status text NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, clinic_id)
        )
      `,
    ],
  },
  {
    name: 'warehouses',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('warehouses')} (
          tenant_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          name text NOT NULL,
          kind text NOT NULL,
          clinic_id text COLLATE "C",
          status text NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, warehouse_id)
        )
      `,
    ],
  },
];

/** Clinics and warehouses as a fold: each row's changes coalesce into one row to insert or one patch to apply. */
const locationsFolding = inMemoryFolding(
  () => ({
    clinics: new RowChanges<ClinicRecord, ClinicPatch>('clinic'),
    warehouses: new RowChanges<WarehouseRecord, WarehousePatch>('warehouse'),
  }),
  (event, { clinics, warehouses }) => foldEvent(event, clinics, warehouses),
  ({ clinics, warehouses }, context) => writeLocations(clinics, warehouses, context),
);

/** Clinics (locations) and warehouses of every tenant. */
export const locationsProjection: Projection = {
  name: 'locations',
  version: 1,
  tables,
  handles: ['ClinicOpened', 'ClinicRenamed', 'ClinicStatusChanged', 'WarehouseOpened', 'WarehouseStatusChanged'],
  fold: locationsFolding,
};

/** One INSERT of the rows created, one UPDATE of the others' combined patches, per table. */
async function writeLocations(clinics: RowChanges<ClinicRecord, ClinicPatch>, warehouses: RowChanges<WarehouseRecord, WarehousePatch>, { db, table }: ProjectionContext): Promise<void> {
  if (clinics.created.length > 0) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('clinics')} (tenant_id, clinic_id, name, status, updated_at)
      SELECT * FROM ${sql.unnest(
        clinics.created.map((c) => [c.tenantId, c.clinicId, c.name, c.status, c.updatedAt]),
        ['text', 'text', 'text', 'text', 'timestamptz'],
      )}
    `);
  }
  if (clinics.patches.length > 0) {
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('clinics')} AS c
      SET name = coalesce(p.name, c.name), status = coalesce(p.status, c.status), updated_at = p.updated_at
      FROM ${sql.unnest(
        clinics.patches.map((c) => [c.tenantId, c.clinicId, c.name ?? null, c.status ?? null, c.updatedAt]),
        ['text', 'text', 'text', 'text', 'timestamptz'],
      )} AS p(tenant_id, clinic_id, name, status, updated_at)
      WHERE c.tenant_id = p.tenant_id AND c.clinic_id = p.clinic_id
    `);
    expectRowCount('clinic update', result.rowCount, clinics.patches.length);
  }
  if (warehouses.created.length > 0) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('warehouses')} (tenant_id, warehouse_id, name, kind, clinic_id, status, updated_at)
      SELECT * FROM ${sql.unnest(
        warehouses.created.map((w) => [w.tenantId, w.warehouseId, w.name, w.kind, w.clinicId, w.status, w.updatedAt]),
        ['text', 'text', 'text', 'text', 'text', 'text', 'timestamptz'],
      )}
    `);
  }
  if (warehouses.patches.length > 0) {
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('warehouses')} AS w
      SET status = p.status, updated_at = p.updated_at
      FROM ${sql.unnest(
        warehouses.patches.map((w) => [w.tenantId, w.warehouseId, w.status, w.updatedAt]),
        ['text', 'text', 'text', 'timestamptz'],
      )} AS p(tenant_id, warehouse_id, status, updated_at)
      WHERE w.tenant_id = p.tenant_id AND w.warehouse_id = p.warehouse_id
    `);
    expectRowCount('warehouse update', result.rowCount, warehouses.patches.length);
  }
}

function foldEvent(event: ProjectedEvent, clinics: RowChanges<ClinicRecord, ClinicPatch>, warehouses: RowChanges<WarehouseRecord, WarehousePatch>): void {
  const { tenantId, occurredAt: updatedAt } = event;
  switch (event.type) {
    case 'ClinicOpened': {
      const { clinicId, name, status } = event.data;
      clinics.create(tenantId, clinicId, { tenantId, clinicId, name, status, updatedAt });
      break;
    }
    case 'ClinicRenamed': {
      const { clinicId, name } = event.data;
      clinics.change(tenantId, clinicId, { tenantId, clinicId, name, updatedAt });
      break;
    }
    case 'ClinicStatusChanged': {
      const { clinicId, status } = event.data;
      clinics.change(tenantId, clinicId, { tenantId, clinicId, status, updatedAt });
      break;
    }
    case 'WarehouseOpened': {
      const { warehouseId, name, kind, clinicId, status } = event.data;
      warehouses.create(tenantId, warehouseId, { tenantId, warehouseId, name, kind, clinicId: clinicId ?? null, status, updatedAt });
      break;
    }
    case 'WarehouseStatusChanged': {
      const { warehouseId, status } = event.data;
      warehouses.change(tenantId, warehouseId, { tenantId, warehouseId, status, updatedAt });
      break;
    }
    default:
      break;
  }
}
