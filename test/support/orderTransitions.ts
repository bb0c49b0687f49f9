import type { DomainEvent, OrderStatus } from '../../src/events/index.js';
import { isAllowedOrderTransition, orderStatusAfter } from '../../src/events/orderStatusTransitions.js';

/** Every status change of every order, in the order given, that the order state machine refuses. */
export function forbiddenOrderTransitions(events: Iterable<{ readonly type: string; readonly data: unknown }>): string[] {
  const statuses = new Map<string, OrderStatus>();
  const forbidden: string[] = [];
  for (const event of events) {
    const orderId = typeof event.data === 'object' && event.data !== null && 'orderId' in event.data ? String(event.data.orderId) : undefined;
    if (orderId === undefined) continue;
    if (event.type === 'OrderDrafted') {
      statuses.set(orderId, 'draft');
      continue;
    }
    const to = orderStatusAfter(event as DomainEvent);
    const from = statuses.get(orderId);
    if (to === undefined || from === undefined) continue;
    if (!isAllowedOrderTransition(from, to)) forbidden.push(`${orderId}: ${from} → ${to} (${event.type})`);
    else statuses.set(orderId, to);
  }
  return forbidden;
}
