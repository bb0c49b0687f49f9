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
