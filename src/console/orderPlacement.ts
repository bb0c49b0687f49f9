import { randomInt } from 'node:crypto';
import { streamNamePrefix, streams } from '../events/index.js';
import type { ConsoleDeps } from './advanceStep.js';
import { evaluateApprovalPlan } from './approvalPolicy.js';
import { ConsoleError } from './consoleError.js';
import type { OrderLine } from './history/simOrder.js';
import { createTenantDirectory, memberIn } from './tenantDirectory.js';
import { createWriteBatch } from './writeBatch.js';

export type PlacedOrder = { readonly orderId: string; readonly number: number };

/**
 * Drafts and submits a new general order for a clinic (the first clinic opened that is active, if
 * none is named) to its express warehouse: one to three everyday items that are in stock elsewhere.
 */
export async function placeOrder(deps: ConsoleDeps, input: { readonly workspaceId: string; readonly clinicId?: string }): Promise<PlacedOrder> {
  const { eventStore, clock, ids } = deps;
  const { workspaceId } = input;
  const directory = createTenantDirectory(eventStore, workspaceId);
  await directory.workspace();
  const [clinics, warehouses, items, members, boxes] = await Promise.all([
    directory.clinics(),
    directory.warehouses(),
    directory.items(),
    directory.members(),
    directory.boxes(),
  ]);

  const clinic =
    input.clinicId === undefined
      ? clinics
          .map((c) => c.view)
          .filter((c) => c.status === 'active')
          .sort((a, b) => a.openedAt.localeCompare(b.openedAt) || a.clinicId.localeCompare(b.clinicId))[0]
      : clinics.find((c) => c.view.clinicId === input.clinicId)?.view;
  if (clinic === undefined) {
    throw new ConsoleError(input.clinicId === undefined ? `workspace ${workspaceId} has no active clinic` : `clinic ${input.clinicId} does not exist in workspace ${workspaceId}`);
  }
  if (clinic.status !== 'active') throw new ConsoleError(`clinic ${clinic.clinicId} is ${clinic.status}; orders go to active clinics`);
  const destination = warehouses.find((w) => w.view.kind === 'express' && w.view.clinicId === clinic.clinicId && w.view.status === 'active')?.view;
  if (destination === undefined) throw new ConsoleError(`clinic ${clinic.clinicId} has no active express warehouse to deliver to`);

  // Everyday supplies that some other warehouse can ship now, so that advancing the order works:
  // no serial tracking, nothing that needs a two-person rule.
  const today = clock.now().toISOString().slice(0, 10);
  const availableElsewhere = new Map<string, number>();
  for (const { view: box } of boxes) {
    if (box.status !== 'active' || box.warehouseId === destination.warehouseId || (box.expiresOn !== undefined && box.expiresOn <= today)) continue;
    const free = box.onHand - box.reserved;
    if (free > 0) availableElsewhere.set(box.catalogItemId, (availableElsewhere.get(box.catalogItemId) ?? 0) + free);
  }
  const everyday = items
    .map((i) => i.view)
    .filter((i) => i.status === 'active' && !i.highValue && !i.tracksSerial && (availableElsewhere.get(i.itemId) ?? 0) > 0);
  if (everyday.length === 0) throw new ConsoleError(`workspace ${workspaceId} has no active catalog item in stock to order`);
  const requester = memberIn(members, 'purchasing') ?? memberIn(members, 'clinician', clinic.clinicId);
  if (requester === undefined) throw new ConsoleError(`workspace ${workspaceId} has no active member to place an order`);

  const chosen = new Set<number>();
  const lineCount = Math.min(everyday.length, randomInt(1, 4));
  while (chosen.size < lineCount) chosen.add(randomInt(0, everyday.length));
  const lines: OrderLine[] = [...chosen].map((index) => {
    const item = everyday[index];
    if (item === undefined) throw new Error('chosen item exists');
    return {
      lineId: ids.id('lin'),
      catalogItemId: item.itemId,
      sku: item.sku,
      name: item.name,
      requestedQty: Math.min(availableElsewhere.get(item.itemId) ?? 1, item.unitOfMeasure === 'milliliter' ? 100 : randomInt(2, 6)),
      unitOfMeasure: item.unitOfMeasure,
      categoryId: item.categoryId,
      highValue: item.highValue,
      ...(item.unitCost === undefined || item.currency === undefined ? {} : { unitCost: item.unitCost, currency: item.currency }),
    };
  });
  const costed = lines.filter((line) => line.unitCost !== undefined);
  const value = costed.length === 0 ? undefined : costed.reduce((sum, line) => sum + (line.unitCost ?? 0) * line.requestedQty, 0);
  const currency = costed[0]?.currency;

  // Order numbers are dense from 1 per tenant, so the next one follows the count of orders.
  const number = (await eventStore.streamNames(streamNamePrefix('order', workspaceId))).length + 1;
  const orderId = ids.id('ord');
  const stream = streams.order(workspaceId, orderId);
  const batch = createWriteBatch(workspaceId, clock.now().toISOString(), ids);
  batch.add(stream, 'no_stream', 'OrderDrafted', {
    orderId,
    number,
    type: 'general',
    requesterId: requester.memberId,
    clinicId: clinic.clinicId,
    destinationWarehouseId: destination.warehouseId,
    justification: 'Placed from the console',
    lines,
    ...(value === undefined || currency === undefined ? {} : { value, currency }),
    lineCount: lines.length,
  });
  batch.add(stream, 'no_stream', 'OrderSubmitted', {
    orderId,
    submittedBy: requester.memberId,
    approvalPlan: evaluateApprovalPlan({ type: 'general', lines, value, currency }),
  });
  await eventStore.appendMany(batch.writes());
  return { orderId, number };
}
