// What the steps of an order's lifecycle share: scheduling, stream names, cancellation.
import { streams } from '../../events/index.js';
import { warehouseStaff, witness } from './actors.js';
import type { Allocation, SimOrder } from './simOrder.js';
import { recordMovement } from './stockLedger.js';
import { dayMs, laterAtWork, minuteMs, type TenantContext } from './tenantContext.js';
import { addTo, stockKey } from './tenantWorld.js';

/** Central stock closer to expiry than this is not sent to clinics. */
export const allocationShelfMarginMs = 30 * dayMs;

export const cancellationReasons = ['No longer needed', 'Ordered by mistake', 'Replaced by a consolidated order', 'Case postponed by the patient'];

/** Schedules the next step unless the order is meant to stay where it is. */
export function after(ctx: TenantContext, order: SimOrder, minMinutes: number, maxMinutes: number, step: (order: SimOrder, ctx: TenantContext) => void): void {
  if (order.fate.stopAt === order.status) return;
  const due = order.fate.fast ? ctx.now() + Math.floor(ctx.rng.between(3, 25) * minuteMs) : laterAtWork(ctx.rng, ctx.now(), minMinutes, maxMinutes);
  ctx.at(due, () => step(order, ctx));
}

export function orderStream(ctx: TenantContext, order: SimOrder): string {
  return streams.order(ctx.tenantId, order.id);
}

export function fulfillmentStream(ctx: TenantContext, order: SimOrder): string {
  return streams.fulfillment(ctx.tenantId, order.id);
}

export function cancel(ctx: TenantContext, order: SimOrder, cancelledBy: string, reason: string): void {
  ctx.emit(orderStream(ctx, order), 'OrderCancelled', { orderId: order.id, cancelledBy, reason });
  if (order.status === 'allocated') {
    const actor = warehouseStaff(ctx, order.source.id).id;
    for (const allocation of order.allocations) recordReservation(ctx, order, allocation, 'release', actor);
  }
  order.status = 'cancelled';
  releaseOnOrder(ctx, order);
}

/** Once per order: the clinic no longer waits for these quantities (received, rejected, cancelled or lost). */
export function releaseOnOrder(ctx: TenantContext, order: SimOrder): void {
  if (order.onOrderReleased) return;
  order.onOrderReleased = true;
  for (const line of order.lines) addTo(ctx.world.onOrder, stockKey(order.destination.id, line.catalogItemId), -line.requestedQty);
}

/** Reserves an allocation's quantity on its box, or releases it; high-value items need a witness. */
export function recordReservation(ctx: TenantContext, order: SimOrder, allocation: Allocation, type: 'reserve' | 'release', actorId: string): void {
  recordMovement(ctx, allocation.box, {
    type,
    quantityDelta: 0,
    reservedDelta: type === 'reserve' ? allocation.quantity : -allocation.quantity,
    actorId,
    ...(allocation.box.item.template.highValue ? { secondActorId: witness(ctx, actorId) } : {}),
    correlationId: order.id,
    idempotencyKey: `${order.id}:${type}:${allocation.lineId}:${allocation.box.id}`,
    ...(allocation.splitId === undefined ? {} : { splitId: allocation.splitId }),
  });
}
