/**
 * Stream naming. Every stream of the service starts with `supply.` (EventStoreDB subscriptions
 * filter $all on that prefix); then the category, the tenant, and the entity:
 * `supply.order-<tenantId>.<orderId>`. Names are built here and nowhere else.
 */
export const streamPrefix = 'supply.';

export const streamCategories = ['workspace', 'member', 'clinic', 'warehouse', 'category', 'item', 'box', 'order', 'fulfillment'] as const;
export type StreamCategory = (typeof streamCategories)[number];

export function streamName(category: StreamCategory, tenantId: string, entityId?: string): string {
  return entityId === undefined ? `${streamPrefix}${category}-${tenantId}` : `${streamPrefix}${category}-${tenantId}.${entityId}`;
}

/** The common start of the names of one category's entity streams of a tenant (for `streamNames`). */
export function streamNamePrefix(category: StreamCategory, tenantId: string): string {
  return `${streamPrefix}${category}-${tenantId}.`;
}

export const streams = {
  workspace: (tenantId: string) => streamName('workspace', tenantId),
  member: (tenantId: string, memberId: string) => streamName('member', tenantId, memberId),
  clinic: (tenantId: string, clinicId: string) => streamName('clinic', tenantId, clinicId),
  warehouse: (tenantId: string, warehouseId: string) => streamName('warehouse', tenantId, warehouseId),
  category: (tenantId: string, categoryId: string) => streamName('category', tenantId, categoryId),
  item: (tenantId: string, itemId: string) => streamName('item', tenantId, itemId),
  box: (tenantId: string, boxId: string) => streamName('box', tenantId, boxId),
  order: (tenantId: string, orderId: string) => streamName('order', tenantId, orderId),
  fulfillment: (tenantId: string, orderId: string) => streamName('fulfillment', tenantId, orderId),
} as const;
