import { streams } from '../../events/index.js';
import { submit } from './orderApproval.js';
import { after, cancel } from './orderSteps.js';
import type { OrderFate, OrderLine, SimOrder } from './simOrder.js';
import type { TenantContext } from './tenantContext.js';
import { addTo, stockKey, type Box, type Clinic, type Item, type Warehouse } from './tenantWorld.js';

export type OrderRequest = {
  readonly type: 'general' | 'clinical';
  readonly clinic: Clinic;
  readonly requesterId: string;
  readonly lines: readonly { readonly item: Item; readonly quantity: number }[];
  readonly justification?: string;
  readonly patientRef?: string;
  readonly preferredSource?: Warehouse;
  readonly fate: OrderFate;
  readonly onReceived?: (boxes: readonly Box[]) => void;
};

/** Drafts an order and lets its lifecycle run as its fate says. */
export function draftOrder(ctx: TenantContext, request: OrderRequest): SimOrder {
  const { world } = ctx;
  const lines: OrderLine[] = [];
  const lineItems = new Map<string, Item>();
  let value = 0;
  let costed = false;
  for (const { item, quantity } of request.lines) {
    const lineId = ctx.ids.id('lin');
    lineItems.set(lineId, item);
    lines.push({
      lineId,
      catalogItemId: item.id,
      sku: item.sku,
      name: item.name,
      requestedQty: quantity,
      unitOfMeasure: item.template.unitOfMeasure,
      categoryId: item.categoryId,
      highValue: item.template.highValue,
      ...(item.unitCost === undefined ? {} : { unitCost: item.unitCost, currency: world.currency }),
    });
    if (item.unitCost !== undefined) {
      value += item.unitCost * quantity;
      costed = true;
    }
  }
  const order: SimOrder = {
    id: ctx.ids.id('ord'),
    number: world.nextOrderNumber,
    type: request.type,
    clinic: request.clinic,
    requesterId: request.requesterId,
    destination: request.clinic.express,
    source: request.preferredSource ?? request.clinic.central,
    lines,
    lineItems,
    value: costed ? value : undefined,
    plan: undefined,
    status: 'draft',
    fate: request.fate,
    allocations: [],
    allocationAttempts: 0,
    fulfillmentId: undefined,
    onOrderReleased: false,
    ...(request.onReceived === undefined ? {} : { onReceived: request.onReceived }),
  };
  world.nextOrderNumber += 1;
  ctx.emit(streams.order(ctx.tenantId, order.id), 'OrderDrafted', {
    orderId: order.id,
    number: order.number,
    type: order.type,
    requesterId: order.requesterId,
    clinicId: order.clinic.id,
    destinationWarehouseId: order.destination.id,
    ...(request.preferredSource === undefined ? {} : { preferredSourceWarehouseId: request.preferredSource.id }),
    ...(request.justification === undefined ? {} : { justification: request.justification }),
    ...(request.patientRef === undefined ? {} : { patientRef: request.patientRef }),
    lines,
    ...(order.value === undefined ? {} : { value: order.value, currency: world.currency }),
    lineCount: lines.length,
  });
  for (const line of lines) addTo(world.onOrder, stockKey(order.destination.id, line.catalogItemId), line.requestedQty);
  if (order.fate.abandon) {
    if (order.fate.stopAt !== 'draft') after(ctx, order, 2 * 24 * 60, 8 * 24 * 60, (o) => cancel(ctx, o, o.requesterId, 'Draft abandoned'));
  } else {
    after(ctx, order, 10, 6 * 60, submit);
  }
  return order;
}
