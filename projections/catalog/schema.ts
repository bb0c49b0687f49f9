import { z } from 'zod';
import { costMeasurement } from '../../src/events/catalog.js';
import { costStatus, criticality, itemStatus } from '../../src/events/index.js';
import { storedInteger } from '../shared/storedInteger.js';

/** A catalog category as /v1 returns it; `parentCategoryId` only for a subcategory. */
export const catalogCategory = z
  .object({
    categoryId: z.string(),
    name: z.string(),
    parentCategoryId: z.string().optional(),
  })
  .strict();
export type CatalogCategory = z.infer<typeof catalogCategory>;

const itemFields = {
  itemId: z.string(),
  sku: z.string(),
  name: z.string(),
  categoryId: z.string(),
  unitOfMeasure: z.string(),
  packaging: z.string(),
  criticality,
  tracksLot: z.boolean(),
  tracksSerial: z.boolean(),
  tracksExpiry: z.boolean(),
  highValue: z.boolean(),
  status: itemStatus,
};

const costFields = {
  costStatus: costStatus.optional(),
  cost: z.number().int().optional(),
  currency: z.string().optional(),
  costMeasurement: costMeasurement.optional(),
};

/**
 * A catalog item as /v1 returns it. The cost fields only for a key with `catalog.cost:read`, and
 * then each only when recorded.
 */
export const catalogItem = z.object({ ...itemFields, ...costFields }).strict();
export type CatalogItem = z.infer<typeof catalogItem>;

/** An item without cost: strict, so that no cost field can slip through. */
export const catalogItemWithoutCost = z.object(itemFields).strict();

/** A stored item with its cost columns. */
export const catalogItemWithCostRow = catalogItem.extend({ cost: storedInteger.optional() });
