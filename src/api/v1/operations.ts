import { getCatalogItemOperation, listCatalogCategoriesOperation, listCatalogItemsOperation } from './catalog.js';
import { listClinicsOperation, listWarehousesOperation } from './clinics.js';
import { getFulfillmentOperation, listFulfillmentsOperation } from './fulfillments.js';
import { getBoxBalanceOperation, getBoxOperation, listBalancesOperation, listBoxMovementsOperation } from './inventory.js';
import { meOperation } from './me.js';
import type { Operation } from './operation.js';
import { getOrderOperation, listOrdersOperation } from './orders.js';
import { analyticsOperations } from './analytics.js';
import { listBalanceChangesOperation, listFulfillmentChangesOperation, listOrderChangesOperation } from './changes.js';
import { exportOperations } from './exports.js';

/** Every /v1 operation, in the order of the specification's endpoint table. */
export const v1Operations: readonly Operation[] = [
  meOperation,
  listClinicsOperation,
  listWarehousesOperation,
  listCatalogItemsOperation,
  getCatalogItemOperation,
  listCatalogCategoriesOperation,
  listBalancesOperation,
  listBalanceChangesOperation,
  getBoxOperation,
  getBoxBalanceOperation,
  listBoxMovementsOperation,
  listOrdersOperation,
  // Before the operations of one record: `changes` is a path of its own, not an id.
  listOrderChangesOperation,
  getOrderOperation,
  listFulfillmentsOperation,
  listFulfillmentChangesOperation,
  getFulfillmentOperation,
  ...analyticsOperations,
  ...exportOperations,
];
