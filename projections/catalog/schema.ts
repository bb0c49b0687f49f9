import { z } from 'zod';
import { unitOfMeasure } from '../../src/events/catalog.js';
import { code, name, text } from '../../src/events/primitives.js';
import { costStatus, criticality, itemStatus } from '../../src/events/index.js';
import { currencyCode, jsonInteger, storedId } from '../../src/events/responseFields.js';
import { storedInteger } from '../shared/storedInteger.js';

/** A catalog category as /v1 returns it; `parentCategoryId` only for a subcategory. */
export const catalogCategory = z
  .object({
    categoryId: storedId,
    name,
    parentCategoryId: storedId.optional(),
  })
  .strict();
export type CatalogCategory = z.infer<typeof catalogCategory>;

const itemFields = {
  itemId: storedId,
  sku: code,
  name,
  categoryId: storedId,
  unitOfMeasure,
  packaging: text,
  criticality,
  tracksLot: z.boolean(),
  tracksSerial: z.boolean(),
  tracksExpiry: z.boolean(),
  highValue: z.boolean(),
  status: itemStatus,
};

/** The quantity a recorded cost refers to (read back from jsonb), e.g. 1 box of 100 units. */
const costMeasurement = z.object({ quantity: jsonInteger(1), unitOfMeasure }).strict();

const costFields = {
  costStatus: costStatus.optional(),
  /** Stored as int8 and read as `storedInteger` (exact, within ±(2^53 - 1)); never negative. */
  cost: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64' }).optional(),
  currency: currencyCode.optional(),
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
