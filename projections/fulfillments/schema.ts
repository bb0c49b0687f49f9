import { z } from 'zod';
import { code, maxOrderLines, name, text } from '../../src/events/primitives.js';
import { fulfillmentStatus } from '../../src/events/index.js';
import { custodyMovementType, fulfillmentEvents, receiptDiscrepancy } from '../../src/events/fulfillments.js';
import { jsonInteger, responseTimestamp, storedId } from '../../src/events/responseFields.js';

/**
 * The status of a delivery record. Transitions, in the order the fulfillment stream tells them:
 *
 * | From | Event | To |
 * | - | - | - |
 * | (none) | FulfillmentDispatched | `dispatched` |
 * | `dispatched` | CustodyTransferred (the first hand-over, e.g. to the carrier) | `in_transit` |
 * | any but `closed` | DeliveryExceptionRaised | `exception` |
 * | `exception` | DeliveryExceptionResolved of the last open exception | `in_transit` (on its way again, or waiting for closure when written off) |
 * | any but `closed` | FulfillmentDelivered | `delivered` |
 * | any but `closed` | FulfillmentReceived without discrepancies | `received` |
 * | any but `closed` | FulfillmentReceived with discrepancies | `partially_received` |
 * | any | FulfillmentClosed | `closed` (final) |
 *
 * Any other event leaves the status as it is (later custody movements, such as the hand-over at
 * the clinic, are recorded without changing it). Every event moves `updatedAt`.
 */
export const fulfillmentStatusDescription = [
  'dispatched: dispatched from the source warehouse; custody not yet transferred.',
  'in_transit: custody transferred after dispatch, or the last open exception resolved.',
  'exception: a delivery exception is open.',
  'delivered: delivered at the destination.',
  'received: received at the destination without discrepancies.',
  'partially_received: received with discrepancies.',
  'closed: closed; final.',
].join(' ');

export const fulfillmentStatusResponse = fulfillmentStatus.describe(fulfillmentStatusDescription);
export type FulfillmentStatus = z.infer<typeof fulfillmentStatus>;

export const custodyMovementResponse = z
  .object({
    custodyMovementId: storedId,
    type: custodyMovementType,
    fromActorId: storedId,
    toActorId: storedId,
    location: name.optional(),
    occurredAt: responseTimestamp,
  })
  .strict();
export type CustodyMovementResponse = z.infer<typeof custodyMovementResponse>;

export const deliveryResponse = z
  .object({ deliveredBy: storedId, receivedBy: storedId, deliveredAt: responseTimestamp, signatureRef: code.optional() })
  .strict();
export type DeliveryResponse = z.infer<typeof deliveryResponse>;

export const receiptResponse = z
  .object({
    receivedBy: storedId,
    receivedAt: responseTimestamp,
    lines: z.array(z.object({ lineId: storedId, catalogItemId: storedId, receivedQty: jsonInteger() }).strict()).max(maxOrderLines),
    discrepancies: z.array(receiptDiscrepancy.extend({ expectedQty: jsonInteger(), receivedQty: jsonInteger() })).max(maxOrderLines),
  })
  .strict();
export type ReceiptResponse = z.infer<typeof receiptResponse>;

export const closureResponse = z
  .object({ closedBy: storedId, outcome: fulfillmentEvents.FulfillmentClosed.shape.outcome, closedAt: responseTimestamp })
  .strict();
export type ClosureResponse = z.infer<typeof closureResponse>;

/** A delivery exception; `resolution` and `resolvedAt` once resolved. `reportedAt` and `resolvedAt` are when the events occurred. */
export const deliveryExceptionResponse = z
  .object({
    exceptionId: storedId,
    reasonCode: fulfillmentEvents.DeliveryExceptionRaised.shape.reasonCode,
    description: text.min(1),
    reportedAt: responseTimestamp,
    resolution: fulfillmentEvents.DeliveryExceptionResolved.shape.resolution.optional(),
    resolvedAt: responseTimestamp.optional(),
  })
  .strict();
export type DeliveryExceptionResponse = z.infer<typeof deliveryExceptionResponse>;

/** The custody history of one order, as /v1 returns it: member ids, never member names. */
export const fulfillmentResponse = z
  .object({
    orderId: storedId,
    fulfillmentId: storedId,
    status: fulfillmentStatusResponse,
    updatedAt: responseTimestamp,
    /** Oldest first. */
    movements: z.array(custodyMovementResponse),
    delivery: deliveryResponse.optional(),
    receipt: receiptResponse.optional(),
    closure: closureResponse.optional(),
    exceptions: z.array(deliveryExceptionResponse),
  })
  .strict();
export type FulfillmentResponse = z.infer<typeof fulfillmentResponse>;

/** An element of the fulfillment list. */
export const fulfillmentListItem = z
  .object({
    orderId: storedId,
    fulfillmentId: storedId,
    status: fulfillmentStatusResponse,
    sourceWarehouseId: storedId,
    destinationWarehouseId: storedId,
    dispatchedAt: responseTimestamp,
    updatedAt: responseTimestamp,
  })
  .strict();
export type FulfillmentListItem = z.infer<typeof fulfillmentListItem>;

/** A list row: the item and its creation sequence, which the API signs into the cursor. */
// No transform: a zod effect per row costs more than the query on a 200-row page.
export const fulfillmentListRow = fulfillmentListItem.extend({ seq: z.bigint() });
export type FulfillmentListRow = { seq: bigint; item: FulfillmentListItem };
