export * from './catalogue.js';
export * from './streams.js';
export { orderStatus, orderType, type OrderStatus } from './orders.js';
export { fulfillmentStatus } from './fulfillments.js';
export { movementType, boxStatus } from './stock.js';
export { criticality, itemStatus, costStatus } from './catalog.js';
export { clinicStatus, warehouseKind, warehouseStatus } from './locations.js';
