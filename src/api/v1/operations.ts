import { getCatalogItemOperation, listCatalogCategoriesOperation, listCatalogItemsOperation } from './catalog.js';
import { listClinicsOperation, listWarehousesOperation } from './clinics.js';
import { getFulfillmentOperation, listFulfillmentsOperation } from './fulfillments.js';
import { getBoxBalanceOperation, getBoxOperation, listBalancesOperation, listBoxMovementsOperation } from './inventory.js';
import { meOperation } from './me.js';
import type { Operation } from './operation.js';
import { getOrderOperation, listOrdersOperation } from './orders.js';
import { analyticsOperations } from './analytics.js';
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
  getBoxOperation,
  getBoxBalanceOperation,
  listBoxMovementsOperation,
  listOrdersOperation,
  getOrderOperation,
  listFulfillmentsOperation,
  getFulfillmentOperation,
  ...analyticsOperations,
  ...exportOperations,
];
