import { streams, type EventEnvelope, type OrderStatus } from '../events/index.js';
import { evaluateApprovalPlan } from './approvalPolicy.js';
import { boxView, type BoxView } from './boxFold.js';
import { ConsoleError } from './consoleError.js';
import { readSnapshot } from './consoleReads.js';
import { requireMember, witnessFor, type AdvanceStep, type ConsoleDeps } from './advanceStep.js';
import { allocateOrder } from './orderAllocation.js';
import { orderState } from './orderState.js';
import { createTenantDirectory, memberWith, type Viewed } from './tenantDirectory.js';
import { createWriteBatch } from './writeBatch.js';

export type AdvancedOrder = { readonly orderId: string; readonly status: OrderStatus; readonly version: number };

const terminal: ReadonlySet<OrderStatus> = new Set(['rejected', 'cancelled', 'closed']);

/**
 * Appends the next status event(s) of one order along the happy path: draft → submitted →
 * pending_approval (or straight to approved) → approved → allocated → picking → dispatched →
 * delivered → received → closed; an exception is resolved and delivered, a partial receipt closed.
 */
export async function advanceOrder(deps: ConsoleDeps, input: { readonly workspaceId: string; readonly orderId: string }): Promise<AdvancedOrder> {
  const { eventStore, clock, ids } = deps;
  const directory = createTenantDirectory(eventStore, input.workspaceId);
  await directory.workspace();
  const orderStream = await readSnapshot(eventStore, streams.order(input.workspaceId, input.orderId));
  const fulfillmentStream = await readSnapshot(eventStore, streams.fulfillment(input.workspaceId, input.orderId));
  const order = orderState([...orderStream.events, ...fulfillmentStream.events]);
  if (order === undefined) throw new ConsoleError(`order ${input.orderId} does not exist in workspace ${input.workspaceId}`);
  if (terminal.has(order.status)) throw new ConsoleError(`order ${order.orderId} is ${order.status}; it cannot advance any further`);

  const now = clock.now();
  const batch = createWriteBatch(input.workspaceId, now.toISOString(), ids);
  await stepsByStatus[order.status]({ deps, directory, order, orderStream, fulfillmentStream, batch, now });

  const writes = batch.writes();
  await eventStore.appendMany(writes);
  const after = orderState([...orderStream.events, ...fulfillmentStream.events, ...writes.flatMap((write) => write.events)]);
  if (after === undefined) throw new Error('an advanced order has a state');
  return { orderId: after.orderId, status: after.status, version: after.version };
}

const stepsByStatus: Record<OrderStatus, (step: AdvanceStep) => Promise<void>> = {
  draft: async ({ order, orderStream, batch }) => {
    const approvalPlan = evaluateApprovalPlan({ type: order.type, lines: order.lines, value: order.value, currency: order.currency });
    batch.add(orderStream.streamName, orderStream.revision, 'OrderSubmitted', { orderId: order.orderId, submittedBy: order.requesterId, approvalPlan });
  },
  submitted: async ({ order, orderStream, batch }) => {
    const first = order.approvalPlan?.steps[0];
    if (order.approvalPlan?.requiresApproval === true && first !== undefined) {
      batch.add(orderStream.streamName, orderStream.revision, 'OrderApprovalRequested', { orderId: order.orderId, stage: first.stage });
    } else {
      batch.add(orderStream.streamName, orderStream.revision, 'OrderApproved', { orderId: order.orderId });
    }
  },
  pending_approval: approveRemainingStages,
  approved: allocateOrder,
  allocated: async ({ directory, order, orderStream, batch }) => {
    const picker = await requireMember(directory, 'warehouse', `pick order ${order.orderId}`);
    batch.add(orderStream.streamName, orderStream.revision, 'OrderPickingStarted', { orderId: order.orderId, pickerId: picker });
  },
  picking: dispatch,
  dispatched: deliver,
  exception: async (step) => {
    const { order, fulfillmentStream, batch, directory } = step;
    if (order.openExceptionId !== undefined) {
      batch.add(fulfillmentStream.streamName, fulfillmentStream.revision, 'DeliveryExceptionResolved', {
        orderId: order.orderId,
        exceptionId: order.openExceptionId,
        resolution: 'redelivered',
        resolvedBy: await requireMember(directory, 'purchasing', `resolve the exception of order ${order.orderId}`),
      });
    }
    await deliver(step);
  },
  delivered: receive,
  received: (step) => close(step, 'complete'),
  partially_fulfilled: (step) => close(step, 'partial'),
  rejected: async () => undefined,
  cancelled: async () => undefined,
  closed: async () => undefined,
};

/** Grants every stage still open (asking for the ones not yet asked), then approves. */
async function approveRemainingStages({ directory, order, orderStream, batch }: AdvanceStep): Promise<void> {
  const members = await directory.members();
  for (const planStep of order.approvalPlan?.steps ?? []) {
    if (!order.requestedStages.includes(planStep.stage)) {
      batch.add(orderStream.streamName, orderStream.revision, 'OrderApprovalRequested', { orderId: order.orderId, stage: planStep.stage });
    }
    const granted = new Set(order.grants.filter((g) => g.stage === planStep.stage).map((g) => g.approverId));
    // Nobody approves their own order, nor the same stage twice.
    const excluded = new Set([...granted, order.requesterId]);
    for (let count = granted.size; count < planStep.minApprovers; count += 1) {
      const approver = memberWith(members, planStep.requiredScope, excluded);
      if (approver === undefined) {
        throw new ConsoleError(
          `no active member of workspace ${directory.workspaceId} holds ${planStep.requiredScope} to approve stage ${planStep.stage} of order ${order.orderId}`,
        );
      }
      excluded.add(approver.memberId);
      batch.add(orderStream.streamName, orderStream.revision, 'OrderApprovalGranted', {
        orderId: order.orderId,
        stage: planStep.stage,
        approverId: approver.memberId,
        comment: 'Approved from the console',
      });
    }
  }
  batch.add(orderStream.streamName, orderStream.revision, 'OrderApproved', { orderId: order.orderId });
}

/** The current state of each box the allocation reserved. */
async function allocatedBoxes({ deps, directory, order }: AdvanceStep): Promise<Map<string, Viewed<BoxView>>> {
  const found = new Map<string, Viewed<BoxView>>();
  for (const boxId of new Set(order.allocations.map((a) => a.boxId))) {
    const stream = await readSnapshot(deps.eventStore, streams.box(directory.workspaceId, boxId));
    const view = boxView(stream.events);
    if (view === undefined) throw new ConsoleError(`box ${boxId} allocated to order ${order.orderId} does not exist`);
    found.set(boxId, { view, stream });
  }
  return found;
}

async function dispatch(step: AdvanceStep): Promise<void> {
  const { deps, directory, order, fulfillmentStream, batch, now } = step;
  const source = order.sourceWarehouseId;
  if (source === undefined) throw new ConsoleError(`order ${order.orderId} has no source warehouse`);
  const dispatcher = await requireMember(directory, 'warehouse', `dispatch order ${order.orderId}`);
  const boxes = await allocatedBoxes(step);
  batch.add(fulfillmentStream.streamName, fulfillmentStream.revision, 'FulfillmentDispatched', {
    orderId: order.orderId,
    fulfillmentId: deps.ids.id('ful'),
    sourceWarehouseId: source,
    destinationWarehouseId: order.destinationWarehouseId,
    dispatchedBy: dispatcher,
    carrier: 'Internal courier',
    boxIds: [...boxes.keys()],
  });
  for (const allocation of order.allocations) {
    const box = boxes.get(allocation.boxId);
    if (box === undefined || box.view.reserved < allocation.quantity || box.view.onHand < allocation.quantity) {
      throw new ConsoleError(`box ${allocation.boxId} no longer holds the ${allocation.quantity} reserved for order ${order.orderId}`);
    }
    batch.add(box.stream.streamName, box.stream.revision, 'StockMovementRecorded', {
      movementId: deps.ids.id('mov'),
      type: 'issue',
      boxId: allocation.boxId,
      catalogItemId: box.view.catalogItemId,
      quantityDelta: -allocation.quantity,
      reservedDelta: -allocation.quantity,
      actorId: dispatcher,
      ...(await witnessFor(directory, box.view.catalogItemId, dispatcher)),
      fromWarehouseId: source,
      toWarehouseId: order.destinationWarehouseId,
      idempotencyKey: `${order.orderId}:issue:${allocation.lineId}:${allocation.boxId}`,
      correlationId: order.orderId,
      occurredAt: now.toISOString(),
    });
  }
  batch.add(fulfillmentStream.streamName, fulfillmentStream.revision, 'CustodyTransferred', {
    orderId: order.orderId,
    custodyMovementId: deps.ids.id('cus'),
    type: 'handover',
    fromActorId: dispatcher,
    toActorId: deps.ids.id('crr'),
    occurredAt: now.toISOString(),
  });
}

/** Who holds the shipment: the last one custody was handed to. */
function currentCourier(events: readonly EventEnvelope[]): string | undefined {
  let holder: string | undefined;
  for (const event of events) if (event.type === 'CustodyTransferred') holder = event.data.toActorId;
  return holder;
}

async function deliver({ deps, directory, order, fulfillmentStream, batch, now }: AdvanceStep): Promise<void> {
  const courier = currentCourier(fulfillmentStream.events) ?? deps.ids.id('crr');
  const receiver = await requireMember(directory, 'clinician', `receive order ${order.orderId}`, order.clinicId);
  batch.add(fulfillmentStream.streamName, fulfillmentStream.revision, 'FulfillmentDelivered', {
    orderId: order.orderId,
    deliveredBy: courier,
    receivedBy: receiver,
    deliveredAt: now.toISOString(),
  });
  batch.add(fulfillmentStream.streamName, fulfillmentStream.revision, 'CustodyTransferred', {
    orderId: order.orderId,
    custodyMovementId: deps.ids.id('cus'),
    type: 'handover',
    fromActorId: courier,
    toActorId: receiver,
    occurredAt: now.toISOString(),
  });
}

/** Serials that left a box with this order's issue (serials leave a box first in, first out). */
function issuedSerials(box: Viewed<BoxView>, orderId: string, lineId: string): string[] | undefined {
  let registered: readonly string[] | undefined;
  let gone = 0;
  for (const event of box.stream.events) {
    if (event.type === 'BoxRegistered') registered = event.data.serials;
    if (event.type !== 'StockMovementRecorded' || registered === undefined || event.data.quantityDelta >= 0) continue;
    const taken = registered.slice(gone, gone - event.data.quantityDelta);
    gone -= event.data.quantityDelta;
    if (event.data.type === 'issue' && event.data.idempotencyKey?.startsWith(`${orderId}:issue:${lineId}:`) === true) return taken;
  }
  return undefined;
}

/** The destination receives what was allocated: new boxes with the source's lot, expiry and serials. */
async function receive(step: AdvanceStep): Promise<void> {
  const { deps, directory, order, fulfillmentStream, batch, now } = step;
  const receiver = await requireMember(directory, 'clinician', `receive order ${order.orderId}`, order.clinicId);
  const boxes = await allocatedBoxes(step);
  const receivedByLine = new Map<string, number>();
  for (const allocation of order.allocations) receivedByLine.set(allocation.lineId, (receivedByLine.get(allocation.lineId) ?? 0) + allocation.quantity);
  batch.add(fulfillmentStream.streamName, fulfillmentStream.revision, 'FulfillmentReceived', {
    orderId: order.orderId,
    receivedBy: receiver,
    receivedAt: now.toISOString(),
    lines: order.lines.map((line) => ({ lineId: line.lineId, catalogItemId: line.catalogItemId, receivedQty: receivedByLine.get(line.lineId) ?? 0 })),
    // Less than requested can only come from a partial allocation: the receipt says so.
    discrepancies: order.lines.flatMap((line) => {
      const receivedQty = receivedByLine.get(line.lineId) ?? 0;
      return receivedQty < line.requestedQty
        ? [{ lineId: line.lineId, catalogItemId: line.catalogItemId, expectedQty: line.requestedQty, receivedQty, reasonCode: 'short' as const }]
        : [];
    }),
  });
  for (const allocation of order.allocations) {
    const source = boxes.get(allocation.boxId);
    if (source === undefined) continue;
    const boxId = deps.ids.id('box');
    const streamName = streams.box(directory.workspaceId, boxId);
    const serials = issuedSerials(source, order.orderId, allocation.lineId);
    batch.add(streamName, 'no_stream', 'BoxRegistered', {
      boxId,
      code: `BX-${boxId.slice(-8, -4).toUpperCase()}-${boxId.slice(-4).toUpperCase()}`,
      catalogItemId: source.view.catalogItemId,
      warehouseId: order.destinationWarehouseId,
      status: 'active',
      ...(source.view.lot === undefined ? {} : { lot: source.view.lot }),
      ...(serials === undefined ? {} : { serials }),
      ...(source.view.expiresOn === undefined ? {} : { expiresOn: source.view.expiresOn }),
      origin: { type: 'order', reference: order.orderId },
    });
    batch.add(streamName, 'no_stream', 'StockMovementRecorded', {
      movementId: deps.ids.id('mov'),
      type: 'receive',
      boxId,
      catalogItemId: source.view.catalogItemId,
      quantityDelta: allocation.quantity,
      actorId: receiver,
      ...(await witnessFor(directory, source.view.catalogItemId, receiver)),
      ...(order.sourceWarehouseId === undefined ? {} : { fromWarehouseId: order.sourceWarehouseId }),
      toWarehouseId: order.destinationWarehouseId,
      idempotencyKey: `${order.orderId}:receive:${allocation.lineId}:${allocation.boxId}`,
      correlationId: order.orderId,
      occurredAt: now.toISOString(),
    });
  }
}

async function close({ directory, order, fulfillmentStream, batch }: AdvanceStep, outcome: 'complete' | 'partial'): Promise<void> {
  batch.add(fulfillmentStream.streamName, fulfillmentStream.revision, 'FulfillmentClosed', {
    orderId: order.orderId,
    closedBy: await requireMember(directory, 'purchasing', `close order ${order.orderId}`),
    outcome,
  });
}
