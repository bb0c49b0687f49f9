import { describe, expect, it } from 'vitest';
import { newEvent, type EventData, type EventEnvelope, type EventType } from '../events/index.js';
import { orderState } from './orderState.js';

const tenantId = 'ws_test';
let sequence = 0;

function event<T extends EventType>(type: T, data: EventData<T>, minute: number): EventEnvelope {
  sequence += 1;
  const eventId = `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`;
  return newEvent(type, data, { eventId, tenantId, occurredAt: new Date(Date.UTC(2025, 10, 3, 9, minute)).toISOString() });
}

const orderId = 'ord_1';
const line = {
  lineId: 'lin_1',
  catalogItemId: 'itm_implant',
  sku: 'IMP-BLT-41X10MM',
  name: 'Bone-level tapered implant, 4.1 × 10 mm',
  requestedQty: 2,
  unitOfMeasure: 'unit',
  categoryId: 'cat_implantology',
  highValue: true,
  unitCost: 21_500,
  currency: 'EUR',
};
const plan = {
  policyVersion: 2,
  requiresApproval: true,
  steps: [
    { stage: 'clinical_lead', requiredScope: 'clinical.approve', minApprovers: 1 },
    { stage: 'finance', requiredScope: 'orders.approve_high_value', minApprovers: 1 },
  ],
  evaluatedValue: 43_000,
  currency: 'EUR',
};

const drafted = event(
  'OrderDrafted',
  {
    orderId,
    number: 7,
    type: 'clinical',
    requesterId: 'mem_clinician',
    clinicId: 'cli_1',
    destinationWarehouseId: 'wh_express',
    patientRef: 'PT-123456',
    lines: [line],
    value: 43_000,
    currency: 'EUR',
    lineCount: 1,
  },
  0,
);
const orderStream = [
  drafted,
  event('OrderSubmitted', { orderId, submittedBy: 'mem_clinician', approvalPlan: plan }, 1),
  event('OrderApprovalRequested', { orderId, stage: 'clinical_lead' }, 2),
  event('OrderApprovalGranted', { orderId, stage: 'clinical_lead', approverId: 'mem_lead' }, 3),
  event('OrderApprovalRequested', { orderId, stage: 'finance' }, 4),
  event('OrderApprovalGranted', { orderId, stage: 'finance', approverId: 'mem_owner' }, 5),
  event('OrderApproved', { orderId }, 6),
  event('OrderAllocated', { orderId, sourceWarehouseId: 'wh_central', allocations: [{ lineId: 'lin_1', boxId: 'box_1', quantity: 2 }] }, 7),
  event('OrderPickingStarted', { orderId, pickerId: 'mem_picker' }, 8),
];
const fulfillmentStream = [
  event(
    'FulfillmentDispatched',
    { orderId, fulfillmentId: 'ful_1', sourceWarehouseId: 'wh_central', destinationWarehouseId: 'wh_express', dispatchedBy: 'mem_picker', boxIds: ['box_1'] },
    9,
  ),
  event('CustodyTransferred', { orderId, custodyMovementId: 'cus_1', type: 'handover', fromActorId: 'mem_picker', toActorId: 'crr_1', occurredAt: '2025-11-03T09:09:00.000Z' }, 9),
  event('DeliveryExceptionRaised', { orderId, exceptionId: 'exc_1', reasonCode: 'delayed', description: 'Missed the slot', reportedBy: 'crr_1' }, 10),
  event('DeliveryExceptionResolved', { orderId, exceptionId: 'exc_1', resolution: 'redelivered', resolvedBy: 'mem_buyer' }, 11),
  event('FulfillmentDelivered', { orderId, deliveredBy: 'crr_1', receivedBy: 'mem_clinician', deliveredAt: '2025-11-03T09:12:00.000Z' }, 12),
  event(
    'FulfillmentReceived',
    {
      orderId,
      receivedBy: 'mem_clinician',
      receivedAt: '2025-11-03T09:13:00.000Z',
      lines: [{ lineId: 'lin_1', catalogItemId: 'itm_implant', receivedQty: 1 }],
      discrepancies: [{ lineId: 'lin_1', catalogItemId: 'itm_implant', expectedQty: 2, receivedQty: 1, reasonCode: 'damaged' }],
    },
    13,
  ),
  event('FulfillmentClosed', { orderId, closedBy: 'mem_buyer', outcome: 'partial' }, 14),
];

describe('orderState', () => {
  it('knows no order before it is drafted', () => {
    expect(orderState([])).toBeUndefined();
    expect(orderState(orderStream.slice(1))).toBeUndefined();
  });

  it('starts a drafted order at version 1 with its lines and value', () => {
    expect(orderState([drafted])).toMatchObject({
      orderId,
      number: 7,
      type: 'clinical',
      status: 'draft',
      version: 1,
      lines: [line],
      value: 43_000,
      currency: 'EUR',
      patientRef: 'PT-123456',
      createdAt: '2025-11-03T09:00:00.000Z',
    });
  });

  it('counts status changes, not events: a second approval stage keeps the order pending', () => {
    const pending = orderState(orderStream.slice(0, 6));
    expect(pending).toMatchObject({ status: 'pending_approval', version: 3, requestedStages: ['clinical_lead', 'finance'], approvalPlan: plan });
    expect(pending?.grants).toEqual([
      { stage: 'clinical_lead', approverId: 'mem_lead' },
      { stage: 'finance', approverId: 'mem_owner' },
    ]);
  });

  it('follows the order through fulfillment: an exception and its resolution, a partial receipt, closure', () => {
    const statuses = [...orderStream, ...fulfillmentStream].map((_, i, all) => orderState(all.slice(0, i + 1))?.status);
    expect(statuses).toEqual([
      'draft',
      'submitted',
      'pending_approval',
      'pending_approval',
      'pending_approval',
      'pending_approval',
      'approved',
      'allocated',
      'picking',
      'dispatched',
      'dispatched',
      'exception',
      'dispatched',
      'delivered',
      'partially_fulfilled',
      'closed',
    ]);
    const closed = orderState([...orderStream, ...fulfillmentStream]);
    expect(closed).toMatchObject({
      status: 'closed',
      version: 12,
      sourceWarehouseId: 'wh_central',
      allocations: [{ lineId: 'lin_1', boxId: 'box_1', quantity: 2 }],
      fulfillmentId: 'ful_1',
      openExceptionId: undefined,
      hasDiscrepancies: true,
      updatedAt: '2025-11-03T09:14:00.000Z',
    });
    expect(closed?.statusHistory.map((entry) => entry.status)).toEqual([
      'draft',
      'submitted',
      'pending_approval',
      'approved',
      'allocated',
      'picking',
      'dispatched',
      'exception',
      'dispatched',
      'delivered',
      'partially_fulfilled',
      'closed',
    ]);
  });

  it('receives a complete delivery as received, and ends rejected or cancelled orders there', () => {
    const received = event(
      'FulfillmentReceived',
      { orderId, receivedBy: 'mem_clinician', receivedAt: '2025-11-03T09:13:00.000Z', lines: [{ lineId: 'lin_1', catalogItemId: 'itm_implant', receivedQty: 2 }], discrepancies: [] },
      13,
    );
    expect(orderState([...orderStream, ...fulfillmentStream.slice(0, 1), received])?.status).toBe('received');
    const rejected = event('OrderRejected', { orderId, stage: 'clinical_lead', approverId: 'mem_lead', reason: 'Not indicated' }, 3);
    expect(orderState([...orderStream.slice(0, 3), rejected])).toMatchObject({ status: 'rejected', version: 4 });
    const cancelled = event('OrderCancelled', { orderId, cancelledBy: 'mem_clinician' }, 1);
    expect(orderState([drafted, cancelled])).toMatchObject({ status: 'cancelled', version: 2 });
  });

  it('ignores the events of other orders', () => {
    const other = event('OrderApproved', { orderId: 'ord_other' }, 2);
    expect(orderState([drafted, other])).toMatchObject({ status: 'draft', version: 1 });
  });
});
