import type { DomainEvent } from './catalogue.js';
import type { OrderStatus } from './orders.js';

/**
 * The status an event moves an order to; `undefined` for events that leave it as it is. The one
 * mapping the console and the orders read model share, so that they never disagree.
 */
export function orderStatusAfter(event: DomainEvent): OrderStatus | undefined {
  switch (event.type) {
    case 'OrderSubmitted':
      return 'submitted';
    case 'OrderApprovalRequested':
      return 'pending_approval';
    case 'OrderApproved':
      return 'approved';
    case 'OrderRejected':
      return 'rejected';
    case 'OrderCancelled':
      return 'cancelled';
    case 'OrderAllocated':
      return 'allocated';
    case 'OrderPickingStarted':
      return 'picking';
    case 'FulfillmentDispatched':
      return 'dispatched';
    case 'DeliveryExceptionRaised':
      return 'exception';
    // A resolved exception puts the shipment back on its way (or up for closure when written off).
    case 'DeliveryExceptionResolved':
      return 'dispatched';
    case 'FulfillmentDelivered':
      return 'delivered';
    case 'FulfillmentReceived':
      return event.data.discrepancies.length > 0 ? 'partially_fulfilled' : 'received';
    case 'FulfillmentClosed':
      return 'closed';
    default:
      return undefined;
  }
}

/**
 * The order state machine: the statuses an order may move to from each status (the specification
 * does not show its transitions; this is the lifecycle the console follows). A status never goes
 * back: once dispatched, an order is never picked again. `exception` returns to `dispatched` when
 * the delivery problem is resolved, and a shipment written off is closed without delivery.
 * Rejected, cancelled and closed are final.
 */
export const orderStatusTransitions: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  draft: ['submitted', 'cancelled'],
  submitted: ['pending_approval', 'approved', 'rejected', 'cancelled'],
  pending_approval: ['approved', 'rejected', 'cancelled'],
  approved: ['allocated', 'cancelled'],
  allocated: ['picking', 'cancelled'],
  picking: ['dispatched', 'cancelled'],
  dispatched: ['delivered', 'exception', 'closed'],
  exception: ['dispatched', 'delivered', 'closed'],
  delivered: ['received', 'partially_fulfilled', 'exception'],
  received: ['closed'],
  partially_fulfilled: ['closed'],
  rejected: [],
  cancelled: [],
  closed: [],
};

/** Whether an order in status `from` may move to `to`; staying where it is is no transition and always allowed. */
export function isAllowedOrderTransition(from: OrderStatus, to: OrderStatus): boolean {
  return from === to || orderStatusTransitions[from].includes(to);
}
