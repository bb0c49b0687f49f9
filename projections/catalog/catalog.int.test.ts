import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventData } from '../../src/events/index.js';
import { sql } from '../../src/platform/sql.js';
import { createProjectionTestBed, event, otherTenant, rawEvent, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { catalogProjection } from './projection.js';
import { getItem, listCategories, listItems } from './queries.js';

const withCost = { includeCost: true };
const withoutCost = { includeCost: false };

const definition = (itemId: string, overrides: Partial<EventData<'CatalogItemDefined'>> = {}): EventData<'CatalogItemDefined'> => ({
  itemId,
  sku: `SKU-${itemId}`,
  name: 'Articaine 4% cartridges',
  categoryId: 'cat-anaesthesia',
  unitOfMeasure: 'box',
  packaging: 'Box of 50 cartridges',
  criticality: 'critical',
  tracksLot: true,
  tracksSerial: false,
  tracksExpiry: true,
  highValue: false,
  reorderPoint: 4,
  status: 'active',
  ...overrides,
});

/** The /v1 shape of `definition(itemId)` without cost. */
const shown = (itemId: string) => ({
  itemId,
  sku: `SKU-${itemId}`,
  name: 'Articaine 4% cartridges',
  categoryId: 'cat-anaesthesia',
  unitOfMeasure: 'box',
  packaging: 'Box of 50 cartridges',
  criticality: 'critical',
  tracksLot: true,
  tracksSerial: false,
  tracksExpiry: true,
  highValue: false,
  status: 'active',
});

const confirmedCost = {
  costStatus: 'confirmed',
  cost: 4590,
  currency: 'EUR',
  costMeasurement: { quantity: 1, unitOfMeasure: 'box' },
} as const;

const costKeys = ['costStatus', 'cost', 'currency', 'costMeasurement'];

describe('catalog projection', () => {
  let bed: ProjectionTestBed;
  beforeAll(async () => {
    bed = await createProjectionTestBed([catalogProjection]);
  });
  afterAll(async () => bed?.close());

  it('given categories defined and renamed, lists them by id with parentCategoryId only for subcategories', async () => {
    await bed.project([
      event('CatalogCategoryDefined', { categoryId: 'cat-surgery', name: 'Surgery' }),
      event('CatalogCategoryDefined', { categoryId: 'cat-anaesthesia', name: 'Anaesthesia' }),
      event('CatalogCategoryDefined', { categoryId: 'cat-sutures', name: 'Sutures', parentCategoryId: 'cat-surgery' }),
      event('CatalogCategoryRenamed', { categoryId: 'cat-sutures', name: 'Sutures and needles' }),
      event('CatalogCategoryDefined', { categoryId: 'cat-other', name: 'Other tenant' }, { tenantId: otherTenant }),
    ]);
    await bed.project([event('CatalogCategoryRenamed', { categoryId: 'cat-surgery', name: 'Oral surgery' })]);

    const categories = await listCategories(bed.pool, testTenant);
    expect(categories).toEqual([
      { categoryId: 'cat-anaesthesia', name: 'Anaesthesia' },
      { categoryId: 'cat-surgery', name: 'Oral surgery' },
      { categoryId: 'cat-sutures', name: 'Sutures and needles', parentCategoryId: 'cat-surgery' },
    ]);
    expect(Object.hasOwn(categories[0] ?? {}, 'parentCategoryId')).toBe(false);
    expect(await listCategories(bed.pool, otherTenant)).toEqual([{ categoryId: 'cat-other', name: 'Other tenant' }]);
  });

  it('given an item defined without cost, shows it without any cost field, with or without cost read', async () => {
    await bed.project([event('CatalogItemDefined', definition('i-plain'))]);
    const item = await getItem(bed.pool, testTenant, 'i-plain', withCost);
    expect(item).toEqual(shown('i-plain'));
    for (const key of [...costKeys, 'reorderPoint']) expect(Object.hasOwn(item ?? {}, key), key).toBe(false);
    expect(await getItem(bed.pool, testTenant, 'i-plain', withoutCost)).toEqual(shown('i-plain'));
  });

  it('given a cost recorded, shows the cost fields only with includeCost', async () => {
    await bed.project([event('CatalogItemDefined', definition('i-costed')), event('CatalogItemCostRecorded', { itemId: 'i-costed', ...confirmedCost })]);

    expect(await getItem(bed.pool, testTenant, 'i-costed', withCost)).toEqual({ ...shown('i-costed'), ...confirmedCost });
    const withoutCostRead = await getItem(bed.pool, testTenant, 'i-costed', withoutCost);
    expect(withoutCostRead).toEqual(shown('i-costed'));
    for (const key of costKeys) expect(Object.hasOwn(withoutCostRead ?? {}, key), key).toBe(false);
  });

  it('given a cost recorded, then recorded as missing, shows costStatus missing and no amount', async () => {
    await bed.project([event('CatalogItemDefined', definition('i-cleared'))]);
    await bed.project([event('CatalogItemCostRecorded', { itemId: 'i-cleared', ...confirmedCost })]);
    await bed.project([event('CatalogItemCostRecorded', { itemId: 'i-cleared', costStatus: 'missing' })]);

    const item = await getItem(bed.pool, testTenant, 'i-cleared', withCost);
    expect(item).toEqual({ ...shown('i-cleared'), costStatus: 'missing' });
    for (const key of ['cost', 'currency', 'costMeasurement']) expect(Object.hasOwn(item ?? {}, key), key).toBe(false);
  });

  it('given costs and other changes in one batch, the last recorded cost wins and a later change keeps it', async () => {
    await bed.project([event('CatalogItemDefined', definition('i-batch')), event('CatalogItemDefined', definition('i-batch-new'))]);
    await bed.project([
      event('CatalogItemCostRecorded', { itemId: 'i-batch', costStatus: 'missing' }),
      event('CatalogItemCostRecorded', { itemId: 'i-batch', costStatus: 'estimated', cost: 1200, currency: 'EUR', costMeasurement: { quantity: 10, unitOfMeasure: 'box' } }),
      event('CatalogItemRevised', { itemId: 'i-batch', name: 'Articaine 4% (blister)' }),
      event('CatalogItemCostRecorded', { itemId: 'i-batch-new', ...confirmedCost }),
      event('CatalogItemCostRecorded', { itemId: 'i-batch-new', costStatus: 'missing' }),
      event('CatalogItemStatusChanged', { itemId: 'i-batch-new', status: 'inactive' }),
    ]);

    expect(await getItem(bed.pool, testTenant, 'i-batch', withCost)).toEqual({
      ...shown('i-batch'),
      name: 'Articaine 4% (blister)',
      costStatus: 'estimated',
      cost: 1200,
      currency: 'EUR',
      costMeasurement: { quantity: 10, unitOfMeasure: 'box' },
    });
    expect(await getItem(bed.pool, testTenant, 'i-batch-new', withCost)).toEqual({ ...shown('i-batch-new'), status: 'inactive', costStatus: 'missing' });
  });

  it('given a partial revision, changes only the fields it names', async () => {
    await bed.project([event('CatalogItemDefined', definition('i-revised')), event('CatalogItemCostRecorded', { itemId: 'i-revised', ...confirmedCost })]);
    await bed.project([
      event('CatalogItemRevised', { itemId: 'i-revised', packaging: 'Box of 50 cartridges (blister packed)', reorderPoint: 6 }),
      event('CatalogItemRevised', { itemId: 'i-revised', highValue: true, tracksLot: false }),
    ]);

    expect(await getItem(bed.pool, testTenant, 'i-revised', withCost)).toEqual({
      ...shown('i-revised'),
      packaging: 'Box of 50 cartridges (blister packed)',
      highValue: true,
      tracksLot: false,
      ...confirmedCost,
    });
    // Not part of the /v1 item, but kept for analytics (low stock).
    const reorderPoint = await bed.pool.oneFirst(sql.type(z.object({ reorderPoint: z.number() }))`
      SELECT reorder_point AS "reorderPoint" FROM read_models.catalog_items WHERE tenant_id = ${testTenant} AND item_id = 'i-revised'
    `);
    expect(reorderPoint).toBe(6);
  });

  it('given a status change, shows the new status and lists items of every status by id', async () => {
    const tenantId = 'tenant-list';
    const t = { tenantId };
    await bed.project([
      event('CatalogItemDefined', definition('i-plain'), t),
      event('CatalogItemDefined', definition('i-old'), t),
      event('CatalogItemDefined', definition('i-costed'), t),
      event('CatalogItemCostRecorded', { itemId: 'i-costed', ...confirmedCost }, t),
      event('CatalogItemDefined', definition('i-cleared'), t),
      event('CatalogItemCostRecorded', { itemId: 'i-cleared', costStatus: 'missing' }, t),
      event('CatalogItemDefined', definition('i-batch-new', { status: 'inactive' }), t),
      event('CatalogItemDefined', definition('i-foreign'), { tenantId: otherTenant }),
    ]);
    await bed.project([event('CatalogItemStatusChanged', { itemId: 'i-old', status: 'discontinued' }, t)]);

    const items = await listItems(bed.pool, tenantId, withoutCost);
    expect(items.map((i) => i.itemId)).toEqual(['i-batch-new', 'i-cleared', 'i-costed', 'i-old', 'i-plain']);
    expect(items.find((i) => i.itemId === 'i-old')).toEqual({ ...shown('i-old'), status: 'discontinued' });
    expect(items.find((i) => i.itemId === 'i-batch-new')).toEqual({ ...shown('i-batch-new'), status: 'inactive' });
    for (const item of items) for (const key of costKeys) expect(Object.hasOwn(item, key), key).toBe(false);

    const costed = await listItems(bed.pool, tenantId, withCost);
    expect(costed.find((i) => i.itemId === 'i-costed')).toEqual({ ...shown('i-costed'), ...confirmedCost });
    expect(costed.find((i) => i.itemId === 'i-plain')).toEqual(shown('i-plain'));
  });

  it("does not return another tenant's item", async () => {
    const [mine, theirs] = ['tenant-mine', 'tenant-theirs'];
    await bed.project([
      event('CatalogItemDefined', definition('i-mine'), { tenantId: mine }),
      event('CatalogItemDefined', definition('i-theirs'), { tenantId: theirs }),
      event('CatalogItemDefined', definition('i-both', { name: 'Mine' }), { tenantId: mine }),
      event('CatalogItemDefined', definition('i-both', { name: 'Theirs' }), { tenantId: theirs }),
    ]);
    expect(await getItem(bed.pool, mine, 'i-theirs', withCost)).toBeUndefined();
    expect(await getItem(bed.pool, theirs, 'i-mine', withCost)).toBeUndefined();
    expect(await getItem(bed.pool, theirs, 'i-theirs', withoutCost)).toEqual(shown('i-theirs'));
    expect(await getItem(bed.pool, mine, 'i-both', withoutCost)).toEqual({ ...shown('i-both'), name: 'Mine' });
    expect(await getItem(bed.pool, theirs, 'i-both', withoutCost)).toEqual({ ...shown('i-both'), name: 'Theirs' });
    expect((await listItems(bed.pool, theirs, withCost)).map((i) => i.itemId)).toEqual(['i-both', 'i-theirs']);
  });

  it('dead-letters changes to unknown items and categories and an event that breaks its schema, and applies the rest', async () => {
    const [tenantId, foreign] = ['tenant-letters', 'tenant-letters-b'];
    const t = { tenantId };
    await bed.project([event('CatalogItemDefined', definition('i-kept'), t)]);
    const letters = await bed.project([
      event('CatalogItemRevised', { itemId: 'i-missing', name: 'Ghost' }, t),
      event('CatalogItemCostRecorded', { itemId: 'i-kept', ...confirmedCost }, { tenantId: foreign }),
      event('CatalogCategoryRenamed', { categoryId: 'cat-missing', name: 'Ghost' }, t),
      rawEvent('CatalogItemDefined', { itemId: 'i-bad' }, tenantId),
      event('CatalogItemDefined', definition('i-after'), t),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['CatalogItemRevised', 'catalog'],
      ['CatalogItemCostRecorded', 'catalog'],
      ['CatalogCategoryRenamed', 'catalog'],
      ['CatalogItemDefined', 'catalog'],
    ]);
    expect(letters[0]?.error).toMatch(/1 row\(s\) expected, 0 found/);
    expect(await getItem(bed.pool, tenantId, 'i-after', withoutCost)).toEqual(shown('i-after'));
    expect(await getItem(bed.pool, tenantId, 'i-kept', withCost)).toEqual(shown('i-kept'));
    expect(await getItem(bed.pool, foreign, 'i-kept', withCost)).toBeUndefined();
  });

  it('gives the same tables one event at a time as in batches', async () => {
    // Its own events, so the comparison covers categories, items, costs and revisions whatever ran before.
    const t = { tenantId: 'tenant-digest' };
    await bed.project(
      [
        event('CatalogCategoryDefined', { categoryId: 'cat-surgery', name: 'Surgery' }, t),
        event('CatalogCategoryDefined', { categoryId: 'cat-sutures', name: 'Sutures', parentCategoryId: 'cat-surgery' }, t),
        event('CatalogCategoryRenamed', { categoryId: 'cat-sutures', name: 'Sutures and needles' }, t),
        event('CatalogItemDefined', definition('i-1'), t),
        event('CatalogItemDefined', definition('i-2'), t),
        event('CatalogItemCostRecorded', { itemId: 'i-1', ...confirmedCost }, t),
        event('CatalogItemRevised', { itemId: 'i-1', packaging: 'Box of 100', reorderPoint: 9 }, t),
        event('CatalogItemCostRecorded', { itemId: 'i-2', costStatus: 'missing' }, t),
        event('CatalogItemStatusChanged', { itemId: 'i-2', status: 'inactive' }, t),
      ],
      { batchSize: 4 },
    );
    for (const row of await bed.oneByOneDigestsMatch()) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
