import { z } from 'zod';
import { code, currency, id, minorUnits, name, positiveQuantity, text } from './primitives.js';

export const criticality = z.enum(['low', 'medium', 'high', 'critical']);
export const itemStatus = z.enum(['active', 'inactive', 'discontinued']);
export const costStatus = z.enum(['confirmed', 'estimated', 'missing']);
export const unitOfMeasure = z.string().max(50).regex(/^[a-z_]+$/, 'lowercase unit such as unit, box, milliliter');

/** The quantity a recorded cost refers to, e.g. 1 box of 100 units. */
export const costMeasurement = z
  .object({ quantity: positiveQuantity, unitOfMeasure })
  .strict();

const itemFields = {
  sku: code,
  name,
  categoryId: id,
  unitOfMeasure,
  packaging: text,
  criticality,
  tracksLot: z.boolean(),
  tracksSerial: z.boolean(),
  tracksExpiry: z.boolean(),
  highValue: z.boolean(),
  /** Available quantity per warehouse under which stock counts as low. */
  reorderPoint: z.number().int().nonnegative(),
};

/** Catalog categories and items, including cost (which only some keys may read). */
export const catalogEvents = {
  CatalogCategoryDefined: z.object({ categoryId: id, name, parentCategoryId: id.optional() }).strict(),
  CatalogCategoryRenamed: z.object({ categoryId: id, name }).strict(),

  CatalogItemDefined: z.object({ itemId: id, ...itemFields, status: itemStatus }).strict(),
  CatalogItemRevised: z.object({ itemId: id }).merge(z.object(itemFields).partial()).strict(),
  CatalogItemStatusChanged: z.object({ itemId: id, status: itemStatus }).strict(),
  CatalogItemCostRecorded: z
    .object({
      itemId: id,
      costStatus,
      cost: minorUnits.nonnegative().optional(),
      currency: currency.optional(),
      costMeasurement: costMeasurement.optional(),
    })
    .strict()
    .refine((c) => (c.cost === undefined) === (c.currency === undefined) && (c.cost === undefined) === (c.costMeasurement === undefined), {
      message: 'cost, currency and costMeasurement travel together',
    })
    .refine((c) => c.costStatus !== 'missing' || c.cost === undefined, { message: 'a missing cost has no amount' }),
} as const;
