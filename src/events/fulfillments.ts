import { z } from 'zod';
import { code, id, isoTimestamp, maxOrderLines, name, quantity, text } from './primitives.js';

/** Delivery record statuses; the order's status follows them (see orders.ts). */
export const fulfillmentStatus = z.enum(['dispatched', 'in_transit', 'delivered', 'exception', 'received', 'partially_received', 'closed']);

export const custodyMovementType = z.enum(['handover', 'checkpoint', 'return']);

export const receiptDiscrepancy = z
  .object({
    lineId: id,
    catalogItemId: id,
    expectedQty: quantity,
    receivedQty: quantity,
    reasonCode: z.enum(['short', 'over', 'damaged', 'wrong_item', 'expired']),
  })
  .strict();

/**
 * The fulfillment (custody) stream of one order: one delivery record keyed by orderId, the chain of
 * custody, the delivery, the receipt at destination with its discrepancies, exceptions and closure.
 */
export const fulfillmentEvents = {
  FulfillmentDispatched: z
    .object({
      orderId: id,
      fulfillmentId: id,
      sourceWarehouseId: id,
      destinationWarehouseId: id,
      dispatchedBy: id,
      carrier: name.optional(),
      trackingCode: code.optional(),
      boxIds: z.array(id).min(1),
    })
    .strict(),
  CustodyTransferred: z
    .object({
      orderId: id,
      custodyMovementId: id,
      type: custodyMovementType,
      fromActorId: id,
      toActorId: id,
      location: name.optional(),
      occurredAt: isoTimestamp,
    })
    .strict(),
  FulfillmentDelivered: z
    .object({ orderId: id, deliveredBy: id, receivedBy: id, deliveredAt: isoTimestamp, signatureRef: code.optional() })
    .strict(),
  DeliveryExceptionRaised: z
    .object({
      orderId: id,
      exceptionId: id,
      reasonCode: z.enum(['damaged', 'lost', 'delayed', 'refused', 'temperature', 'wrong_address']),
      description: text.min(1),
      reportedBy: id,
    })
    .strict(),
  DeliveryExceptionResolved: z
    .object({ orderId: id, exceptionId: id, resolution: z.enum(['redelivered', 'written_off', 'returned']), resolvedBy: id })
    .strict(),
  FulfillmentReceived: z
    .object({
      orderId: id,
      receivedBy: id,
      receivedAt: isoTimestamp,
      lines: z.array(z.object({ lineId: id, catalogItemId: id, receivedQty: quantity }).strict()).max(maxOrderLines),
      discrepancies: z.array(receiptDiscrepancy).max(maxOrderLines),
    })
    .strict(),
  FulfillmentClosed: z
    .object({ orderId: id, closedBy: id, outcome: z.enum(['complete', 'partial', 'written_off']) })
    .strict(),
} as const;
