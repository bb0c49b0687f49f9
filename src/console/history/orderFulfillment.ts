// The order's fulfillment stream: dispatch, custody, exceptions, delivery, receipt at the clinic and closure.
import { clinicStaff, courier, purchaser, warehouseStaff, witness } from './actors.js';
import { carriers } from './names.js';
import { after, fulfillmentStream, releaseOnOrder } from './orderSteps.js';
import type { DiscrepancyReason, SimOrder } from './simOrder.js';
import { newSerials, recordMovement, registerBox, takeSerials } from './stockLedger.js';
import { laterAtWork, type TenantContext } from './tenantContext.js';
import type { Box } from './tenantWorld.js';

export function dispatch(order: SimOrder, ctx: TenantContext): void {
  const dispatcher = warehouseStaff(ctx, order.source.id).id;
  const carrier = ctx.rng.pick(carriers);
  const driver = courier(ctx);
  order.fulfillmentId = ctx.ids.id('ful');
  const boxIds = [...new Set(order.allocations.map((a) => a.box.id))];
  ctx.emit(fulfillmentStream(ctx, order), 'FulfillmentDispatched', {
    orderId: order.id,
    fulfillmentId: order.fulfillmentId,
    sourceWarehouseId: order.source.id,
    destinationWarehouseId: order.destination.id,
    dispatchedBy: dispatcher,
    carrier: carrier.name,
    ...(ctx.rng.chance(0.9) ? { trackingCode: `${carrier.trackingPrefix}${ctx.ids.chars(10, '0123456789')}` } : {}),
    boxIds,
  });
  for (const allocation of order.allocations) {
    allocation.serials = takeSerials(allocation.box, allocation.quantity);
    recordMovement(ctx, allocation.box, {
      type: 'issue',
      quantityDelta: -allocation.quantity,
      reservedDelta: -allocation.quantity,
      actorId: dispatcher,
      ...(allocation.box.item.template.highValue ? { secondActorId: witness(ctx, dispatcher) } : {}),
      fromWarehouseId: order.source.id,
      toWarehouseId: order.destination.id,
      correlationId: order.id,
      idempotencyKey: `${order.id}:issue:${allocation.lineId}:${allocation.box.id}`,
      ...(allocation.splitId === undefined ? {} : { splitId: allocation.splitId }),
    });
  }
  custody(ctx, order, 'handover', dispatcher, driver, order.source.name);
  order.status = 'dispatched';
  if (order.fate.stopAt === 'dispatched') return;
  if (order.fate.exception !== undefined) {
    after(ctx, order, 2 * 60, 20 * 60, raiseException);
    return;
  }
  if (!order.fate.fast && ctx.rng.chance(0.5)) {
    ctx.at(laterAtWork(ctx.rng, ctx.now(), 60, 8 * 60), () => custody(ctx, order, 'checkpoint', driver, courier(ctx), 'Regional sorting hub'));
  }
  after(ctx, order, 2 * 60, 20 * 60, deliver);
}

function custody(ctx: TenantContext, order: SimOrder, type: 'handover' | 'checkpoint' | 'return', fromActorId: string, toActorId: string, location: string): void {
  ctx.emit(fulfillmentStream(ctx, order), 'CustodyTransferred', {
    orderId: order.id,
    custodyMovementId: ctx.ids.id('cus'),
    type,
    fromActorId,
    toActorId,
    location,
    occurredAt: ctx.isoNow(),
  });
}

const exceptionDescriptions: Record<string, string> = {
  damaged: 'Outer carton crushed in transit',
  lost: 'Parcel not found at the sorting hub',
  delayed: 'Missed the scheduled delivery slot',
  refused: 'Clinic closed at delivery time; delivery refused',
  temperature: 'Temperature logger out of range during transit',
  wrong_address: 'Delivered to the wrong clinic address',
};

function raiseException(order: SimOrder, ctx: TenantContext): void {
  const exception = order.fate.exception;
  if (exception === undefined) return;
  const exceptionId = ctx.ids.id('exc');
  ctx.emit(fulfillmentStream(ctx, order), 'DeliveryExceptionRaised', {
    orderId: order.id,
    exceptionId,
    reasonCode: exception.reasonCode,
    description: exceptionDescriptions[exception.reasonCode] ?? 'Delivery problem',
    reportedBy: courier(ctx),
  });
  order.status = 'exception';
  if (exception.resolution === 'unresolved') return;
  after(ctx, order, 4 * 60, 4 * 24 * 60, (o) => {
    ctx.emit(fulfillmentStream(ctx, o), 'DeliveryExceptionResolved', {
      orderId: o.id,
      exceptionId,
      resolution: exception.resolution === 'written_off' ? 'written_off' : 'redelivered',
      resolvedBy: purchaser(ctx).id,
    });
    o.status = 'dispatched';
    if (exception.resolution === 'written_off') {
      after(ctx, o, 60, 24 * 60, (lost) => close(lost, ctx, 'written_off'));
    } else {
      after(ctx, o, 2 * 60, 24 * 60, deliver);
    }
  });
}

function deliver(order: SimOrder, ctx: TenantContext): void {
  const driver = courier(ctx);
  const receiver = clinicStaff(ctx, order.clinic.id).id;
  ctx.emit(fulfillmentStream(ctx, order), 'FulfillmentDelivered', {
    orderId: order.id,
    deliveredBy: driver,
    receivedBy: receiver,
    deliveredAt: ctx.isoNow(),
    ...(ctx.rng.chance(0.8) ? { signatureRef: `SIG-${ctx.ids.chars(8)}` } : {}),
  });
  custody(ctx, order, 'handover', driver, receiver, order.clinic.name);
  order.status = 'delivered';
  after(ctx, order, 10, 8 * 60, receive);
}

/** Received quantity per allocation after the (at most one) discrepancy of this receipt. */
function receivedQuantities(ctx: TenantContext, order: SimOrder, reason: DiscrepancyReason | undefined): { quantities: number[]; lineId?: string } {
  const quantities = order.allocations.map((a) => a.quantity);
  if (reason === undefined) return { quantities };
  const line = ctx.rng.pick(order.lines);
  const indexes = order.allocations.flatMap((a, i) => (a.lineId === line.lineId ? [i] : []));
  const last = indexes[indexes.length - 1];
  if (last === undefined) return { quantities };
  if (reason === 'wrong_item') {
    for (const i of indexes) quantities[i] = 0;
  } else if (reason === 'over') {
    quantities[last] = (quantities[last] ?? 0) + Math.max(1, Math.round(line.requestedQty * 0.1));
  } else {
    const missing = Math.max(1, Math.round(line.requestedQty * ctx.rng.between(0.1, 0.5)));
    let left = missing;
    for (const i of [...indexes].reverse()) {
      const take = Math.min(left, quantities[i] ?? 0);
      quantities[i] = (quantities[i] ?? 0) - take;
      left -= take;
    }
  }
  return { quantities, lineId: line.lineId };
}

function receive(order: SimOrder, ctx: TenantContext): void {
  const receiver = clinicStaff(ctx, order.clinic.id).id;
  const { quantities, lineId: discrepancyLine } = receivedQuantities(ctx, order, order.fate.discrepancy);
  const receivedByLine = new Map<string, number>();
  order.allocations.forEach((a, i) => receivedByLine.set(a.lineId, (receivedByLine.get(a.lineId) ?? 0) + (quantities[i] ?? 0)));
  const discrepancies = order.lines.flatMap((line) => {
    const receivedQty = receivedByLine.get(line.lineId) ?? 0;
    if (line.lineId !== discrepancyLine || order.fate.discrepancy === undefined) return [];
    return [{ lineId: line.lineId, catalogItemId: line.catalogItemId, expectedQty: line.requestedQty, receivedQty, reasonCode: order.fate.discrepancy }];
  });
  ctx.emit(fulfillmentStream(ctx, order), 'FulfillmentReceived', {
    orderId: order.id,
    receivedBy: receiver,
    receivedAt: ctx.isoNow(),
    lines: order.lines.map((line) => ({ lineId: line.lineId, catalogItemId: line.catalogItemId, receivedQty: receivedByLine.get(line.lineId) ?? 0 })),
    discrepancies,
  });
  const boxes: Box[] = [];
  order.allocations.forEach((allocation, i) => {
    const quantity = quantities[i] ?? 0;
    if (quantity === 0) return;
    const item = allocation.box.item;
    // An over-delivered serial-tracked item arrives with serials of its own.
    const issued = allocation.serials?.slice(0, quantity);
    const serials = issued === undefined ? undefined : [...issued, ...newSerials(ctx, item, quantity - issued.length)];
    boxes.push(
      registerBox(ctx, {
        item,
        warehouseId: order.destination.id,
        quantity,
        origin: { type: 'order', reference: order.id },
        ...(allocation.box.lot === undefined ? {} : { lot: allocation.box.lot }),
        ...(serials === undefined ? {} : { serials }),
        ...(allocation.box.expiresAtMs === undefined ? {} : { expiresAtMs: allocation.box.expiresAtMs }),
        receipt: {
          actorId: receiver,
          ...(item.template.highValue ? { secondActorId: witness(ctx, receiver, order.clinic.id) } : {}),
          fromWarehouseId: order.source.id,
          toWarehouseId: order.destination.id,
          correlationId: order.id,
          idempotencyKey: `${order.id}:receive:${allocation.lineId}:${allocation.box.id}`,
          ...(allocation.splitId === undefined ? {} : { splitId: allocation.splitId }),
        },
      }),
    );
  });
  order.status = discrepancies.length > 0 ? 'partially_fulfilled' : 'received';
  releaseOnOrder(ctx, order);
  order.onReceived?.(boxes);
  after(ctx, order, 60, 3 * 24 * 60, (o) => close(o, ctx, discrepancies.length > 0 ? 'partial' : 'complete'));
}

function close(order: SimOrder, ctx: TenantContext, outcome: 'complete' | 'partial' | 'written_off'): void {
  ctx.emit(fulfillmentStream(ctx, order), 'FulfillmentClosed', { orderId: order.id, closedBy: purchaser(ctx).id, outcome });
  if (outcome === 'written_off') releaseOnOrder(ctx, order);
  order.status = 'closed';
}
