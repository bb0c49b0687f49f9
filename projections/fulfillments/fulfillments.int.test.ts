import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventData, EventEnvelope } from '../../src/events/index.js';
import { createProjectionTestBed, event, otherTenant, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { fulfillmentsProjection } from './projection.js';
import { getFulfillment, listFulfillments } from './queries.js';

const at = (minute: number): string => new Date(Date.UTC(2026, 10, 1, 9, minute)).toISOString();

type Options = { tenantId?: string; occurredAt?: string };

function dispatched(orderId: string, options: Options = {}, extra: Partial<EventData<'FulfillmentDispatched'>> = {}): EventEnvelope {
  return event(
    'FulfillmentDispatched',
    {
      orderId,
      fulfillmentId: `ful_${orderId}`,
      sourceWarehouseId: 'wh_central',
      destinationWarehouseId: 'wh_express_centro',
      dispatchedBy: 'mem_dispatcher',
      boxIds: ['box_1'],
      ...extra,
    },
    options,
  );
}

function custody(orderId: string, movementId: string, type: 'handover' | 'checkpoint' | 'return', minute: number, options: Options = {}): EventEnvelope {
  return event(
    'CustodyTransferred',
    { orderId, custodyMovementId: movementId, type, fromActorId: 'mem_dispatcher', toActorId: 'crr_driver', occurredAt: at(minute) },
    { ...options, occurredAt: at(minute) },
  );
}

const receipt = {
  receivedBy: 'mem_nurse',
  receivedAt: at(40),
  lines: [
    { lineId: 'lin_1', catalogItemId: 'itm_implant', receivedQty: 1 },
    { lineId: 'lin_2', catalogItemId: 'itm_gauze', receivedQty: 5 },
  ],
  discrepancies: [{ lineId: 'lin_1', catalogItemId: 'itm_implant', expectedQty: 2, receivedQty: 1, reasonCode: 'damaged' as const }],
};

/** A delivery as the seed generator tells it: dispatch, hand-over to the driver, a hub, an exception, delivery, hand-over at the clinic, receipt, closure. */
function deliveryLife(orderId: string): { readonly event: EventEnvelope; readonly status: string }[] {
  const o = (minute: number): Options => ({ occurredAt: at(minute) });
  return [
    { event: dispatched(orderId, o(0), { carrier: 'DentaExpress', trackingCode: 'DX0012345678', boxIds: ['box_1', 'box_0'] }), status: 'dispatched' },
    { event: custody(orderId, 'cus_1', 'handover', 0), status: 'in_transit' },
    {
      event: event('CustodyTransferred', { orderId, custodyMovementId: 'cus_2', type: 'checkpoint', fromActorId: 'crr_driver', toActorId: 'crr_hub', location: 'Regional sorting hub', occurredAt: at(10) }, o(10)),
      status: 'in_transit',
    },
    { event: event('DeliveryExceptionRaised', { orderId, exceptionId: 'exc_1', reasonCode: 'delayed', description: 'Missed the slot', reportedBy: 'crr_hub' }, o(20)), status: 'exception' },
    { event: event('DeliveryExceptionResolved', { orderId, exceptionId: 'exc_1', resolution: 'redelivered', resolvedBy: 'mem_buyer' }, o(25)), status: 'in_transit' },
    { event: event('FulfillmentDelivered', { orderId, deliveredBy: 'crr_hub', receivedBy: 'mem_nurse', deliveredAt: at(30), signatureRef: 'SIG-AB12CD34' }, o(30)), status: 'delivered' },
    {
      event: event('CustodyTransferred', { orderId, custodyMovementId: 'cus_3', type: 'handover', fromActorId: 'crr_hub', toActorId: 'mem_nurse', location: 'Clínica Centro', occurredAt: at(30) }, o(30)),
      status: 'delivered',
    },
    { event: event('FulfillmentReceived', { orderId, ...receipt }, o(40)), status: 'partially_received' },
    { event: event('FulfillmentClosed', { orderId, closedBy: 'mem_buyer', outcome: 'partial' }, o(50)), status: 'closed' },
  ];
}

describe('fulfillments projection', () => {
  let bed: ProjectionTestBed;
  beforeAll(async () => {
    bed = await createProjectionTestBed([fulfillmentsProjection]);
  });
  afterAll(async () => bed?.close());

  it('given a delivery event by event, moves the status as documented', async () => {
    for (const step of deliveryLife('ord_steps')) {
      await bed.project([step.event]);
      const record = await getFulfillment(bed.pool, testTenant, 'ord_steps');
      expect(record?.status, step.event.type).toBe(step.status);
      expect(record?.updatedAt).toBe(step.event.occurredAt);
    }
  });

  it('given a whole delivery in batches, returns the custody history with delivery, receipt, closure and exceptions', async () => {
    const life = deliveryLife('ord_life').map((step) => step.event);
    await bed.project(life.slice(0, 4));
    await bed.project(life.slice(4), { batchSize: 3 });

    expect(await getFulfillment(bed.pool, testTenant, 'ord_life')).toEqual({
      orderId: 'ord_life',
      fulfillmentId: 'ful_ord_life',
      status: 'closed',
      updatedAt: at(50),
      movements: [
        { custodyMovementId: 'cus_1', type: 'handover', fromActorId: 'mem_dispatcher', toActorId: 'crr_driver', occurredAt: at(0) },
        { custodyMovementId: 'cus_2', type: 'checkpoint', fromActorId: 'crr_driver', toActorId: 'crr_hub', location: 'Regional sorting hub', occurredAt: at(10) },
        { custodyMovementId: 'cus_3', type: 'handover', fromActorId: 'crr_hub', toActorId: 'mem_nurse', location: 'Clínica Centro', occurredAt: at(30) },
      ],
      delivery: { deliveredBy: 'crr_hub', receivedBy: 'mem_nurse', deliveredAt: at(30), signatureRef: 'SIG-AB12CD34' },
      receipt,
      closure: { closedBy: 'mem_buyer', outcome: 'partial', closedAt: at(50) },
      exceptions: [{ exceptionId: 'exc_1', reasonCode: 'delayed', description: 'Missed the slot', reportedAt: at(20), resolution: 'redelivered', resolvedAt: at(25) }],
    });
  });

  it('shows a just-dispatched record without movements, delivery, receipt or closure', async () => {
    const tenantId = 'tenant-fresh';
    await bed.project([dispatched('ord_fresh', { tenantId, occurredAt: at(5) })]);
    expect(await getFulfillment(bed.pool, tenantId, 'ord_fresh')).toEqual({
      orderId: 'ord_fresh',
      fulfillmentId: 'ful_ord_fresh',
      status: 'dispatched',
      updatedAt: at(5),
      movements: [],
      exceptions: [],
    });
  });

  it('stays in exception while another exception is open, receives without discrepancies, and never reopens once closed', async () => {
    const tenantId = 'tenant-exceptions';
    const t = { tenantId };
    const orderId = 'ord_exc';
    await bed.project([
      dispatched(orderId, t),
      event('DeliveryExceptionRaised', { orderId, exceptionId: 'exc_a', reasonCode: 'damaged', description: 'Crushed carton', reportedBy: 'crr_1' }, t),
      event('DeliveryExceptionRaised', { orderId, exceptionId: 'exc_b', reasonCode: 'temperature', description: 'Logger out of range', reportedBy: 'crr_1' }, t),
    ]);
    await bed.project([event('DeliveryExceptionResolved', { orderId, exceptionId: 'exc_b', resolution: 'returned', resolvedBy: 'mem_buyer' }, t)]);
    expect((await getFulfillment(bed.pool, tenantId, orderId))?.status).toBe('exception');
    await bed.project([event('DeliveryExceptionResolved', { orderId, exceptionId: 'exc_a', resolution: 'redelivered', resolvedBy: 'mem_buyer' }, t)]);
    expect((await getFulfillment(bed.pool, tenantId, orderId))?.status).toBe('in_transit');

    await bed.project([
      event('FulfillmentDelivered', { orderId, deliveredBy: 'crr_1', receivedBy: 'mem_nurse', deliveredAt: at(30) }, t),
      event('FulfillmentReceived', { orderId, ...receipt, discrepancies: [] }, t),
    ]);
    expect(await getFulfillment(bed.pool, tenantId, orderId)).toMatchObject({ status: 'received', delivery: { deliveredBy: 'crr_1', receivedBy: 'mem_nurse', deliveredAt: at(30) } });
    expect(Object.keys((await getFulfillment(bed.pool, tenantId, orderId))?.delivery ?? {})).not.toContain('signatureRef');

    await bed.project([
      event('FulfillmentClosed', { orderId, closedBy: 'mem_buyer', outcome: 'complete' }, t),
      event('DeliveryExceptionRaised', { orderId, exceptionId: 'exc_c', reasonCode: 'wrong_address', description: 'Late claim', reportedBy: 'mem_nurse' }, t),
    ]);
    const closed = await getFulfillment(bed.pool, tenantId, orderId);
    expect(closed?.status).toBe('closed');
    expect(closed?.exceptions.map((e) => [e.exceptionId, e.resolution])).toEqual([
      ['exc_a', 'redelivered'],
      ['exc_b', 'returned'],
      ['exc_c', undefined],
    ]);
  });

  it('lists delivery records oldest first by dispatch, filtered by status, with list items only', async () => {
    const tenantId = 'tenant-list';
    const t = (minute: number) => ({ tenantId, occurredAt: at(minute) });
    await bed.project([
      dispatched('ord_z', t(1)),
      dispatched('ord_a', t(2), { sourceWarehouseId: 'wh_north' }),
      custody('ord_a', 'cus_a', 'handover', 3, { tenantId }),
    ]);
    expect(await listFulfillments(bed.pool, tenantId, { limit: 10 })).toEqual([
      {
        seq: 1n,
        item: { orderId: 'ord_z', fulfillmentId: 'ful_ord_z', status: 'dispatched', sourceWarehouseId: 'wh_central', destinationWarehouseId: 'wh_express_centro', dispatchedAt: at(1), updatedAt: at(1) },
      },
      {
        seq: 2n,
        item: { orderId: 'ord_a', fulfillmentId: 'ful_ord_a', status: 'in_transit', sourceWarehouseId: 'wh_north', destinationWarehouseId: 'wh_express_centro', dispatchedAt: at(2), updatedAt: at(3) },
      },
    ]);
    expect((await listFulfillments(bed.pool, tenantId, { limit: 10, status: 'in_transit' })).map((r) => r.item.orderId)).toEqual(['ord_a']);
    expect(await listFulfillments(bed.pool, tenantId, { limit: 10, status: 'closed' })).toEqual([]);
  });

  it('pages by creation sequence: a record dispatched between pages appears at the end and nothing repeats', async () => {
    const tenantId = 'tenant-paging';
    await bed.project(['ord_e', 'ord_d', 'ord_c', 'ord_b', 'ord_a'].map((orderId) => dispatched(orderId, { tenantId })), { batchSize: 2 });
    const seen: string[] = [];
    let afterSeq: bigint | undefined;
    for (let page = 0; page < 10; page += 1) {
      const rows = await listFulfillments(bed.pool, tenantId, { limit: 2, ...(afterSeq === undefined ? {} : { afterSeq }) });
      const items = rows.slice(0, 2);
      seen.push(...items.map((r) => r.item.orderId));
      if (page === 0) await bed.project([dispatched('ord_0_new', { tenantId })]);
      if (rows.length <= 2) break;
      afterSeq = items.at(-1)?.seq;
    }
    expect(seen).toEqual(['ord_e', 'ord_d', 'ord_c', 'ord_b', 'ord_a', 'ord_0_new']);
  });

  it('keeps tenants apart', async () => {
    await bed.project([dispatched('ord_shared', { tenantId: otherTenant }), dispatched('ord_shared')]);
    await bed.project([custody('ord_shared', 'cus_other', 'handover', 1, { tenantId: otherTenant })]);
    expect(await getFulfillment(bed.pool, testTenant, 'ord_shared')).toMatchObject({ status: 'dispatched', movements: [] });
    expect(await getFulfillment(bed.pool, otherTenant, 'ord_shared')).toMatchObject({ status: 'in_transit', movements: [{ custodyMovementId: 'cus_other' }] });
    expect(await getFulfillment(bed.pool, otherTenant, 'ord_life')).toBeUndefined();
    expect((await listFulfillments(bed.pool, otherTenant, { limit: 50 })).map((r) => r.item.orderId)).toEqual(['ord_shared']);
  });

  it('dead-letters events about deliveries never dispatched, a second dispatch and an unknown exception, and applies the rest', async () => {
    const tenantId = 'tenant-dead';
    const t = { tenantId };
    const letters = await bed.project([
      dispatched('ord_ok', t),
      custody('ord_ghost', 'cus_ghost', 'handover', 1, t),
      dispatched('ord_ok', t),
      event('DeliveryExceptionResolved', { orderId: 'ord_ok', exceptionId: 'exc_unknown', resolution: 'redelivered', resolvedBy: 'mem_buyer' }, t),
      custody('ord_ok', 'cus_ok', 'handover', 2, t),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['CustodyTransferred', 'fulfillments'],
      ['FulfillmentDispatched', 'fulfillments'],
      ['DeliveryExceptionResolved', 'fulfillments'],
    ]);
    expect(letters.map((l) => l.error)).toEqual([expect.stringMatching(/never dispatched/), expect.stringMatching(/dispatched twice/), expect.stringMatching(/not open/)]);
    expect(await getFulfillment(bed.pool, tenantId, 'ord_ok')).toMatchObject({ status: 'in_transit', movements: [{ custodyMovementId: 'cus_ok' }] });
  });

  it('gives the same tables one event at a time as in batches', async () => {
    for (const row of await bed.oneByOneDigestsMatch()) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
