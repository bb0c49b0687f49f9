// Allocation (reserving stock at the source warehouse) and the start of picking.
import { purchaser, warehouseStaff } from './actors.js';
import { dispatch } from './orderFulfillment.js';
import { after, allocationShelfMarginMs, cancel, cancellationReasons, orderStream, recordReservation } from './orderSteps.js';
import type { Allocation, SimOrder } from './simOrder.js';
import { minuteMs, type TenantContext } from './tenantContext.js';
import { addTo, available, isUsable, liveBoxes, stockKey, usableQuantity, type Box, type Warehouse } from './tenantWorld.js';

/** Takes the line quantities from the source warehouse's boxes, first expiry first; waits for stock if short. */
export function allocate(order: SimOrder, ctx: TenantContext): void {
  const { world } = ctx;
  const plan = planAllocation(ctx, order, order.source);
  if (plan === undefined) {
    // The first miss at a warehouse is a backorder purchasing will see at its next review.
    if (order.allocationAttempts % 8 === 0) recordShortage(ctx, order);
    order.allocationAttempts += 1;
    const other = world.centrals.find((w) => w.id !== order.source.id);
    if (order.allocationAttempts % 8 === 0 && other !== undefined) order.source = other;
    if (order.allocationAttempts > 40) {
      cancel(ctx, order, purchaser(ctx).id, 'Out of stock at every central warehouse');
      return;
    }
    const retryMinutes = order.fate.fast ? 20 : ctx.rng.between(180, 480);
    ctx.at(ctx.now() + Math.floor(retryMinutes * minuteMs), () => allocate(order, ctx));
    return;
  }
  order.allocations = plan;
  ctx.emit(orderStream(ctx, order), 'OrderAllocated', {
    orderId: order.id,
    sourceWarehouseId: order.source.id,
    allocations: plan.map((a) => ({ lineId: a.lineId, boxId: a.box.id, quantity: a.quantity })),
  });
  const allocator = warehouseStaff(ctx, order.source.id).id;
  for (const allocation of plan) recordReservation(ctx, order, allocation, 'reserve', allocator);
  order.status = 'allocated';
  if (order.fate.cancelAfter === 'allocated') {
    after(ctx, order, 60, 20 * 60, (o) => cancel(ctx, o, purchaser(ctx).id, ctx.rng.pick(cancellationReasons)));
  } else {
    after(ctx, order, 60, 8 * 60, startPicking);
  }
}

function recordShortage(ctx: TenantContext, order: SimOrder): void {
  for (const line of order.lines) {
    const usable = usableQuantity(ctx.world, order.source.id, line.catalogItemId, ctx.now(), allocationShelfMarginMs);
    if (usable < line.requestedQty) addTo(ctx.world.shortages, stockKey(order.source.id, line.catalogItemId), line.requestedQty - usable);
  }
}

function planAllocation(ctx: TenantContext, order: SimOrder, source: Warehouse): Allocation[] | undefined {
  const plan: Allocation[] = [];
  for (const line of order.lines) {
    const usable = liveBoxes(ctx.world, source.id, line.catalogItemId).filter((box) => isUsable(box, ctx.now(), allocationShelfMarginMs));
    let remaining = line.requestedQty;
    const parts: { box: Box; quantity: number }[] = [];
    for (const box of usable) {
      if (remaining === 0) break;
      const quantity = Math.min(remaining, available(box));
      parts.push({ box, quantity });
      remaining -= quantity;
    }
    if (remaining > 0) return undefined;
    // A line served from several boxes: its movements share a split id.
    const splitId = parts.length > 1 ? ctx.ids.id('spl') : undefined;
    for (const part of parts) plan.push({ lineId: line.lineId, box: part.box, quantity: part.quantity, splitId });
  }
  return plan;
}

function startPicking(order: SimOrder, ctx: TenantContext): void {
  ctx.emit(orderStream(ctx, order), 'OrderPickingStarted', { orderId: order.id, pickerId: warehouseStaff(ctx, order.source.id).id });
  order.status = 'picking';
  after(ctx, order, 20, 4 * 60, dispatch);
}
