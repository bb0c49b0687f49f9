import type { BoxView } from './boxFold.js';
import { ConsoleError } from './consoleError.js';
import { requireMember, witnessFor, type AdvanceStep } from './advanceStep.js';
import type { Viewed } from './tenantDirectory.js';

type Part = { readonly box: Viewed<BoxView>; readonly quantity: number };
type Allocation = Part & { readonly lineId: string };

function usable(box: BoxView, today: string): boolean {
  return box.status === 'active' && box.onHand - box.reserved > 0 && (box.expiresOn === undefined || box.expiresOn > today);
}

/** First expiry first out; boxes without an expiry date last. */
function byExpiry(a: Viewed<BoxView>, b: Viewed<BoxView>): number {
  return (a.view.expiresOn ?? '9999-12-31').localeCompare(b.view.expiresOn ?? '9999-12-31') || a.view.boxId.localeCompare(b.view.boxId);
}

const total = (parts: readonly Part[]): number => parts.reduce((sum, part) => sum + part.quantity, 0);

/**
 * Reserves stock for every line: all of it from one warehouse if one holds it (the preferred source,
 * then the central warehouses, then the clinics' stores), otherwise from any box of the item, as much
 * as there is. A line whose item has no stock anywhere stops the allocation.
 */
export async function allocateOrder({ deps, directory, order, orderStream, batch, now }: AdvanceStep): Promise<void> {
  const today = now.toISOString().slice(0, 10);
  const [boxes, warehouses] = await Promise.all([directory.boxes(), directory.warehouses()]);
  const stock = boxes.filter((box) => usable(box.view, today)).sort(byExpiry);
  const candidates = [
    ...(order.preferredSourceWarehouseId === undefined ? [] : [order.preferredSourceWarehouseId]),
    ...warehouses.filter((w) => w.view.kind === 'central').map((w) => w.view.warehouseId).sort(),
    ...warehouses.filter((w) => w.view.kind === 'express').map((w) => w.view.warehouseId).sort(),
  ].filter((id, index, all) => id !== order.destinationWarehouseId && all.indexOf(id) === index);
  const rank = (box: Viewed<BoxView>): number => {
    const index = candidates.indexOf(box.view.warehouseId);
    return index === -1 ? candidates.length : index;
  };

  const take = (itemId: string, wanted: number, boxesToUse: readonly Viewed<BoxView>[]): Part[] => {
    const parts: Part[] = [];
    let remaining = wanted;
    for (const box of boxesToUse) {
      if (remaining === 0) break;
      if (box.view.catalogItemId !== itemId) continue;
      const quantity = Math.min(remaining, box.view.onHand - box.view.reserved);
      parts.push({ box, quantity });
      remaining -= quantity;
    }
    return parts;
  };

  let allocations: Allocation[] | undefined;
  for (const warehouseId of candidates) {
    const here = stock.filter((box) => box.view.warehouseId === warehouseId);
    const perLine = order.lines.map((line) => ({ line, parts: take(line.catalogItemId, line.requestedQty, here) }));
    if (perLine.every(({ line, parts }) => total(parts) === line.requestedQty)) {
      allocations = perLine.flatMap(({ line, parts }) => parts.map((part) => ({ lineId: line.lineId, ...part })));
      break;
    }
  }
  if (allocations === undefined) {
    const anywhere = [...stock].sort((a, b) => rank(a) - rank(b) || byExpiry(a, b));
    allocations = order.lines.flatMap((line) => {
      const parts = take(line.catalogItemId, line.requestedQty, anywhere);
      if (parts.length === 0) {
        throw new ConsoleError(`no stock of ${line.sku} (${line.name}) is available in workspace ${directory.workspaceId} to allocate order ${order.orderId}`);
      }
      return parts.map((part) => ({ lineId: line.lineId, ...part }));
    });
  }
  const source = allocations[0]?.box.view.warehouseId;
  if (source === undefined) throw new ConsoleError(`order ${order.orderId} has no line to allocate`);

  const actor = await requireMember(directory, 'warehouse', `allocate order ${order.orderId}`);
  batch.add(orderStream.streamName, orderStream.revision, 'OrderAllocated', {
    orderId: order.orderId,
    sourceWarehouseId: source,
    allocations: allocations.map((a) => ({ lineId: a.lineId, boxId: a.box.view.boxId, quantity: a.quantity })),
  });
  for (const allocation of allocations) {
    batch.add(allocation.box.stream.streamName, allocation.box.stream.revision, 'StockMovementRecorded', {
      movementId: deps.ids.id('mov'),
      type: 'reserve',
      boxId: allocation.box.view.boxId,
      catalogItemId: allocation.box.view.catalogItemId,
      quantityDelta: 0,
      reservedDelta: allocation.quantity,
      actorId: actor,
      ...(await witnessFor(directory, allocation.box.view.catalogItemId, actor)),
      idempotencyKey: `${order.orderId}:reserve:${allocation.lineId}:${allocation.box.view.boxId}`,
      correlationId: order.orderId,
      occurredAt: now.toISOString(),
    });
  }
}
