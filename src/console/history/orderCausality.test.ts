import { describe, expect, it } from 'vitest';
import { forbiddenOrderTransitions } from '../../../test/support/orderTransitions.js';
import type { StreamWrite } from '../../eventStore/eventStore.js';
import { generateHistory } from './generateHistory.js';

const eventsOf = (writes: Iterable<StreamWrite>) => [...writes].flatMap((write) => write.events);

describe('generated histories: order and fulfillment events in causal order', () => {
  it.each(['1', '7', 'demo'])('seed %s: every order moves only as the order state machine allows', (seed) => {
    const events = eventsOf(generateHistory({ seed, tenants: 2, days: 90, scale: 'small', asOf: '2026-11-22T00:00:00.000Z' }));
    expect(events.filter((e) => e.type === 'FulfillmentReceived').length).toBeGreaterThan(10);
    expect(forbiddenOrderTransitions(events)).toEqual([]);
  });

  it('the check itself reports a status change the machine refuses', () => {
    const e = (type: string, data: object) => ({ type, data: { orderId: 'o1', ...data } });
    expect(
      forbiddenOrderTransitions([
        e('OrderDrafted', {}),
        e('OrderSubmitted', {}),
        e('OrderApproved', {}),
        e('OrderAllocated', {}),
        e('FulfillmentDispatched', {}),
      ]),
    ).toEqual(['o1: allocated → dispatched (FulfillmentDispatched)']);
  });
});
