import { getItem, listCategories, listItems } from '../../../projections/catalog/queries.js';
import { catalogCategory, catalogItem } from '../../../projections/catalog/schema.js';
import { z } from '../../platform/zodOpenApi.js';
import { terminalPage } from '../pagination/page.js';
import { defineOperation, type OperationContext } from './operation.js';
import { idParameter, listEnvelope } from './parameters.js';
import { foundOr404 } from './reads.js';

const catalogItemResponse = catalogItem.openapi('CatalogItem', {
  description:
    'A catalog item. `costStatus`, `cost`, `currency` and `costMeasurement` appear only for a key holding `catalog.cost:read`, and `cost`, `currency` and `costMeasurement` only when a cost is recorded; check `costStatus` before using an amount. Amounts are integers in the minor unit of `currency`.',
});

const includeCost = ({ principal }: OperationContext): boolean => principal.scopes.includes('catalog.cost:read');

export const listCatalogItemsOperation = defineOperation({
  operationId: 'listCatalogItems',
  method: 'get',
  path: '/v1/catalog/items',
  tag: 'Catalog',
  summary: 'List catalog items',
  description: 'Every catalog item of the workspace, of every status, by item id; one terminal page.',
  scope: 'catalog:read',
  response: listEnvelope(catalogItemResponse),
  responseName: 'CatalogItemList',
  problems: [],
  handle: async (context) => terminalPage(await listItems(context.db, context.principal.tenantId, { includeCost: includeCost(context) })),
});

export const getCatalogItemOperation = defineOperation({
  operationId: 'getCatalogItem',
  method: 'get',
  path: '/v1/catalog/items/{itemId}',
  tag: 'Catalog',
  summary: 'Get one catalog item',
  description: 'One catalog item of the workspace. An id of another workspace answers exactly like an unknown id.',
  scope: 'catalog:read',
  params: z.object({ itemId: idParameter('Catalog item id.') }),
  response: catalogItemResponse,
  responseName: 'CatalogItem',
  problems: ['catalog.item_not_found'],
  handle: async (context, { params }) =>
    foundOr404(params.itemId, 'catalog.item_not_found', (itemId) => getItem(context.db, context.principal.tenantId, itemId, { includeCost: includeCost(context) })),
});

export const listCatalogCategoriesOperation = defineOperation({
  operationId: 'listCatalogCategories',
  method: 'get',
  path: '/v1/catalog/categories',
  tag: 'Catalog',
  summary: 'List catalog categories',
  description:
    'Every catalog category of the workspace, by category id; one terminal page. `parentCategoryId` is present only for a subcategory. A catalog item\'s `categoryId` and an order line\'s `category` hold a `categoryId`.',
  scope: 'catalog:read',
  response: listEnvelope(catalogCategory.openapi('CatalogCategory')),
  responseName: 'CatalogCategoryList',
  problems: [],
  handle: async ({ db, principal }) => terminalPage(await listCategories(db, principal.tenantId)),
});
