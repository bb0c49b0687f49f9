import type { z } from 'zod';
import type { costMeasurement } from '../../src/events/catalog.js';
import { sql } from '../../src/platform/sql.js';
import { inMemoryFolding, expectRowCount, type Projection, type ProjectedEvent, type ProjectionContext, type TableDefinition } from '../../src/projecting/projection.js';
import { RowChanges } from '../../src/projecting/rowChanges.js';

type CategoryRecord = {
  tenantId: string;
  categoryId: string;
  name: string;
  parentCategoryId: string | null;
  updatedAt: string;
};

type CategoryPatch = Pick<CategoryRecord, 'tenantId' | 'categoryId' | 'name' | 'updatedAt'>;

/** The fields an item is defined with and a revision may change. */
type ItemFields = {
  sku: string;
  name: string;
  categoryId: string;
  unitOfMeasure: string;
  packaging: string;
  criticality: string;
  tracksLot: boolean;
  tracksSerial: boolean;
  tracksExpiry: boolean;
  highValue: boolean;
  reorderPoint: number;
  status: string;
};

/** The last recorded cost; null where it records no amount (a missing cost clears all three). */
type RecordedCost = {
  costStatus: string;
  cost: number | null;
  currency: string | null;
  costMeasurement: z.infer<typeof costMeasurement> | null;
};

type ItemRecord = ItemFields & {
  tenantId: string;
  itemId: string;
  /** Null until the first CatalogItemCostRecorded. */
  recordedCost: RecordedCost | null;
  updatedAt: string;
};

/**
 * A change to an item that existed before the batch: a field that is absent stays as it is.
 * `recordedCost` is replaced whole, so its nulls mean "cleared", unlike an absent `recordedCost`.
 */
type ItemPatch = Partial<ItemFields> & Pick<ItemRecord, 'tenantId' | 'itemId' | 'updatedAt'> & { recordedCost?: RecordedCost };

const tables: readonly TableDefinition[] = [
  {
    name: 'catalog_categories',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('catalog_categories')} (
          tenant_id text COLLATE "C" NOT NULL,
          category_id text COLLATE "C" NOT NULL,
          name text NOT NULL,
          parent_category_id text COLLATE "C",
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, category_id)
        )
      `,
    ],
  },
  {
    name: 'catalog_items',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('catalog_items')} (
          tenant_id text COLLATE "C" NOT NULL,
          item_id text COLLATE "C" NOT NULL,
          sku text NOT NULL,
          name text NOT NULL,
          category_id text COLLATE "C" NOT NULL,
          unit_of_measure text NOT NULL,
          packaging text NOT NULL,
          criticality text NOT NULL,
          tracks_lot boolean NOT NULL,
          tracks_serial boolean NOT NULL,
          tracks_expiry boolean NOT NULL,
          high_value boolean NOT NULL,
          reorder_point integer NOT NULL,
          status text NOT NULL,
          cost_status text,
          cost bigint,
          currency text,
          cost_measurement jsonb,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, item_id)
        )
      `,
    ],
  },
];

/** The catalog as a fold: each row's changes coalesce into one row to insert or one patch to apply. */
const catalogFolding = inMemoryFolding(
  () => ({
    categories: new RowChanges<CategoryRecord, CategoryPatch>('catalog category'),
    items: new RowChanges<ItemRecord, ItemPatch>('catalog item', {
      applyTo: (row, patch) => ({ ...row, ...patch, recordedCost: patch.recordedCost ?? row.recordedCost }),
      combine: (earlier, later) => ({ ...earlier, ...later, recordedCost: later.recordedCost ?? earlier.recordedCost }),
    }),
  }),
  (event, { categories, items }) => foldEvent(event, categories, items),
  ({ categories, items }, context) => writeCatalog(categories, items, context),
);

/** Catalog categories and items of every tenant, cost included (only some keys may read it). */
export const catalogProjection: Projection = {
  name: 'catalog',
  version: 1,
  tables,
  handles: ['CatalogCategoryDefined', 'CatalogCategoryRenamed', 'CatalogItemDefined', 'CatalogItemRevised', 'CatalogItemStatusChanged', 'CatalogItemCostRecorded'],
  fold: catalogFolding,
};

/** One INSERT of the rows created, one UPDATE of the others' combined patches, per table. */
async function writeCatalog(categories: RowChanges<CategoryRecord, CategoryPatch>, items: RowChanges<ItemRecord, ItemPatch>, { db, table }: ProjectionContext): Promise<void> {
  if (categories.created.length > 0) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('catalog_categories')} (tenant_id, category_id, name, parent_category_id, updated_at)
      SELECT * FROM ${sql.unnest(
        categories.created.map((c) => [c.tenantId, c.categoryId, c.name, c.parentCategoryId, c.updatedAt]),
        ['text', 'text', 'text', 'text', 'timestamptz'],
      )}
    `);
  }
  if (categories.patches.length > 0) {
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('catalog_categories')} AS c
      SET name = p.name, updated_at = p.updated_at
      FROM ${sql.unnest(
        categories.patches.map((c) => [c.tenantId, c.categoryId, c.name, c.updatedAt]),
        ['text', 'text', 'text', 'timestamptz'],
      )} AS p(tenant_id, category_id, name, updated_at)
      WHERE c.tenant_id = p.tenant_id AND c.category_id = p.category_id
    `);
    expectRowCount('catalog category update', result.rowCount, categories.patches.length);
  }
  if (items.created.length > 0) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('catalog_items')} (
        tenant_id, item_id, sku, name, category_id, unit_of_measure, packaging, criticality, tracks_lot, tracks_serial,
        tracks_expiry, high_value, reorder_point, status, cost_status, cost, currency, cost_measurement, updated_at
      )
      SELECT * FROM ${sql.unnest(
        items.created.map((i) => [
          i.tenantId,
          i.itemId,
          i.sku,
          i.name,
          i.categoryId,
          i.unitOfMeasure,
          i.packaging,
          i.criticality,
          i.tracksLot,
          i.tracksSerial,
          i.tracksExpiry,
          i.highValue,
          i.reorderPoint,
          i.status,
          ...costColumns(i.recordedCost),
          i.updatedAt,
        ]),
        ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'bool', 'bool', 'bool', 'bool', 'int4', 'text', 'text', 'int8', 'text', 'jsonb', 'timestamptz'],
      )}
    `);
  }
  if (items.patches.length > 0) {
    // A NULL field leaves the column as it is, except for the cost columns: a recorded cost
    // (cost_recorded) replaces all four, NULLs included.
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('catalog_items')} AS i
      SET
        sku = coalesce(p.sku, i.sku),
        name = coalesce(p.name, i.name),
        category_id = coalesce(p.category_id, i.category_id),
        unit_of_measure = coalesce(p.unit_of_measure, i.unit_of_measure),
        packaging = coalesce(p.packaging, i.packaging),
        criticality = coalesce(p.criticality, i.criticality),
        tracks_lot = coalesce(p.tracks_lot, i.tracks_lot),
        tracks_serial = coalesce(p.tracks_serial, i.tracks_serial),
        tracks_expiry = coalesce(p.tracks_expiry, i.tracks_expiry),
        high_value = coalesce(p.high_value, i.high_value),
        reorder_point = coalesce(p.reorder_point, i.reorder_point),
        status = coalesce(p.status, i.status),
        cost_status = CASE WHEN p.cost_recorded THEN p.cost_status ELSE i.cost_status END,
        cost = CASE WHEN p.cost_recorded THEN p.cost ELSE i.cost END,
        currency = CASE WHEN p.cost_recorded THEN p.currency ELSE i.currency END,
        cost_measurement = CASE WHEN p.cost_recorded THEN p.cost_measurement ELSE i.cost_measurement END,
        updated_at = p.updated_at
      FROM ${sql.unnest(
        items.patches.map((i) => [
          i.tenantId,
          i.itemId,
          i.sku ?? null,
          i.name ?? null,
          i.categoryId ?? null,
          i.unitOfMeasure ?? null,
          i.packaging ?? null,
          i.criticality ?? null,
          i.tracksLot ?? null,
          i.tracksSerial ?? null,
          i.tracksExpiry ?? null,
          i.highValue ?? null,
          i.reorderPoint ?? null,
          i.status ?? null,
          i.recordedCost !== undefined,
          ...costColumns(i.recordedCost ?? null),
          i.updatedAt,
        ]),
        [
          'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'bool', 'bool', 'bool', 'bool', 'int4', 'text',
          'bool', 'text', 'int8', 'text', 'jsonb', 'timestamptz',
        ],
      )} AS p(
        tenant_id, item_id, sku, name, category_id, unit_of_measure, packaging, criticality, tracks_lot, tracks_serial,
        tracks_expiry, high_value, reorder_point, status, cost_recorded, cost_status, cost, currency, cost_measurement, updated_at
      )
      WHERE i.tenant_id = p.tenant_id AND i.item_id = p.item_id
    `);
    expectRowCount('catalog item update', result.rowCount, items.patches.length);
  }
}

/** cost_status, cost, currency, cost_measurement (as JSON text: unnest takes primitives only). */
function costColumns(recorded: RecordedCost | null): [string | null, number | null, string | null, string | null] {
  if (recorded === null) return [null, null, null, null];
  const { costStatus, cost, currency, costMeasurement } = recorded;
  return [costStatus, cost, currency, costMeasurement === null ? null : JSON.stringify(costMeasurement)];
}

function foldEvent(event: ProjectedEvent, categories: RowChanges<CategoryRecord, CategoryPatch>, items: RowChanges<ItemRecord, ItemPatch>): void {
  const { tenantId, occurredAt: updatedAt } = event;
  switch (event.type) {
    case 'CatalogCategoryDefined': {
      const { categoryId, name, parentCategoryId } = event.data;
      categories.create(tenantId, categoryId, { tenantId, categoryId, name, parentCategoryId: parentCategoryId ?? null, updatedAt });
      break;
    }
    case 'CatalogCategoryRenamed': {
      const { categoryId, name } = event.data;
      categories.change(tenantId, categoryId, { tenantId, categoryId, name, updatedAt });
      break;
    }
    case 'CatalogItemDefined': {
      const { itemId, ...fields } = event.data;
      items.create(tenantId, itemId, { ...fields, tenantId, itemId, recordedCost: null, updatedAt });
      break;
    }
    case 'CatalogItemRevised': {
      const { itemId, ...fields } = event.data;
      items.change(tenantId, itemId, { ...namedFields(fields), tenantId, itemId, updatedAt });
      break;
    }
    case 'CatalogItemStatusChanged': {
      const { itemId, status } = event.data;
      items.change(tenantId, itemId, { tenantId, itemId, status, updatedAt });
      break;
    }
    case 'CatalogItemCostRecorded': {
      const { itemId, costStatus, cost, currency, costMeasurement } = event.data;
      const recordedCost = { costStatus, cost: cost ?? null, currency: currency ?? null, costMeasurement: costMeasurement ?? null };
      items.change(tenantId, itemId, { tenantId, itemId, recordedCost, updatedAt });
      break;
    }
    default:
      break;
  }
}

/** The fields a revision names: a key present with `undefined` must not erase a value when spread. */
function namedFields(fields: Partial<ItemFields>): Partial<ItemFields> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<ItemFields>;
}
