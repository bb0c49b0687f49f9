import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import type { z } from 'zod';
import { sql } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { catalogCategory, catalogItemWithCostRow, catalogItemWithoutCost, type CatalogCategory, type CatalogItem } from './schema.js';

export type ItemReadOptions = {
  /** Only for a key holding `catalog.cost:read`; otherwise the cost columns are not even read. */
  readonly includeCost: boolean;
};

/** Every category of the tenant, by id (byte order). */
export async function listCategories(db: CommonQueryMethods, tenantId: string): Promise<readonly CatalogCategory[]> {
  return db.any(sql.type(withoutNullColumns(catalogCategory))`
    SELECT category_id AS "categoryId", name, parent_category_id AS "parentCategoryId"
    FROM read_models.catalog_categories
    WHERE tenant_id = ${tenantId}
    ORDER BY category_id
  `);
}

/** Every item of the tenant, of every status, by id (byte order). */
export async function listItems(db: CommonQueryMethods, tenantId: string, options: ItemReadOptions): Promise<readonly CatalogItem[]> {
  const { columns, row } = itemShape(options);
  return db.any(sql.type(row)`
    SELECT ${columns}
    FROM read_models.catalog_items
    WHERE tenant_id = ${tenantId}
    ORDER BY item_id
  `);
}

/** One item of the tenant, or undefined (also for another tenant's item). */
export async function getItem(db: CommonQueryMethods, tenantId: string, itemId: string, options: ItemReadOptions): Promise<CatalogItem | undefined> {
  const { columns, row } = itemShape(options);
  const item = await db.maybeOne(sql.type(row)`
    SELECT ${columns}
    FROM read_models.catalog_items
    WHERE tenant_id = ${tenantId} AND item_id = ${itemId}
  `);
  return item ?? undefined;
}

const itemColumns = sql.fragment`
  item_id AS "itemId", sku, name, category_id AS "categoryId", unit_of_measure AS "unitOfMeasure", packaging, criticality,
  tracks_lot AS "tracksLot", tracks_serial AS "tracksSerial", tracks_expiry AS "tracksExpiry", high_value AS "highValue", status
`;

const costColumns = sql.fragment`
  cost_status AS "costStatus", cost::float8 AS cost, currency, cost_measurement AS "costMeasurement"
`;

function itemShape({ includeCost }: ItemReadOptions): { columns: FragmentSqlToken; row: z.ZodType<CatalogItem, z.ZodTypeDef, unknown> } {
  return includeCost
    ? { columns: sql.fragment`${itemColumns}, ${costColumns}`, row: withoutNullColumns(catalogItemWithCostRow) }
    : { columns: itemColumns, row: withoutNullColumns(catalogItemWithoutCost) };
}
