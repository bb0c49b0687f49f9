import { z } from 'zod';
import { unitOfMeasure } from '../../src/events/catalog.js';
import { code, maxApprovalSteps, maxOrderLines, name, text } from '../../src/events/primitives.js';
import { orderStatus, orderType } from '../../src/events/index.js';
import { currencyCode, int32Column, jsonInteger, storedId } from '../../src/events/responseFields.js';
import { storedJsonText } from '../shared/storedJson.js';

/** A line of an order as /v1 returns it; `unitCost` and `currency` only for a key that may read cost. */
export const orderLineResponse = z
  .object({
    lineId: storedId,
    catalogItemId: storedId,
    sku: code,
    name,
    /** An int4 column; a line always asks for at least one. */
    requestedQty: int32Column(1),
    unitOfMeasure,
    /** The category id. */
    category: storedId,
    highValue: z.boolean(),
    /** Read back through JSON: exact within 2^53 - 1, an error beyond; never negative. */
    unitCost: jsonInteger(0).optional(),
    currency: currencyCode.optional(),
  })
  .strict();
export type OrderLineResponse = z.infer<typeof orderLineResponse>;

/** The approval plan as /v1 returns it: never the value it was evaluated on. */
export const orderApprovalPlanResponse = z
  .object({
    policyVersion: jsonInteger(1),
    requiresApproval: z.boolean(),
    steps: z.array(z.object({ stage: code, requiredScope: code, minApprovers: jsonInteger(1) }).strict()).max(maxApprovalSteps),
    currency: currencyCode.optional(),
  })
  .strict();
export type OrderApprovalPlanResponse = z.infer<typeof orderApprovalPlanResponse>;

/** One order as /v1 returns it. Order value, currency and patient reference are never stored, so never shown. */
export const orderResponse = z
  .object({
    orderId: storedId,
    /** An int4 column; order numbers start at 1. */
    number: int32Column(1),
    type: orderType,
    status: orderStatus,
    requesterId: storedId,
    clinicId: storedId,
    destinationWarehouseId: storedId,
    preferredSourceWarehouseId: storedId.optional(),
    justification: text.min(1).optional(),
    lines: z.array(orderLineResponse).min(1).max(maxOrderLines),
    approvalPlan: orderApprovalPlanResponse.optional(),
    /** Grows by one every time the status changes; 1 once drafted. */
    version: int32Column(1),
  })
  .strict();
export type OrderResponse = z.infer<typeof orderResponse>;

/** An element of the order list. */
export const orderListItem = orderResponse.pick({
  orderId: true,
  number: true,
  type: true,
  status: true,
  requesterId: true,
  clinicId: true,
  destinationWarehouseId: true,
  version: true,
});
export type OrderListItem = z.infer<typeof orderListItem>;

/**
 * A list row: the item as its stored JSON text (orders.item_json) and its creation sequence,
 * which the API signs into the cursor.
 */
export const orderListRow = z.object({ seq: z.bigint(), itemJson: storedJsonText(orderListItem) });
export type OrderListRow = z.infer<typeof orderListRow>;

/** A list row read from the columns (a generation built before item_json). */
// No transform: a zod effect per row costs more than the query on a 200-row page.
export const orderListColumnsRow = orderListItem.extend({ seq: z.bigint() });
