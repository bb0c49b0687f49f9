import { z } from 'zod';
import { orderStatus, orderType } from '../../src/events/index.js';

/** A line of an order as /v1 returns it; `unitCost` and `currency` only for a key that may read cost. */
export const orderLineResponse = z
  .object({
    lineId: z.string(),
    catalogItemId: z.string(),
    sku: z.string(),
    name: z.string(),
    requestedQty: z.number().int(),
    unitOfMeasure: z.string(),
    /** The category id. */
    category: z.string(),
    highValue: z.boolean(),
    unitCost: z.number().int().optional(),
    currency: z.string().optional(),
  })
  .strict();
export type OrderLineResponse = z.infer<typeof orderLineResponse>;

/** The approval plan as /v1 returns it: never the value it was evaluated on. */
export const orderApprovalPlanResponse = z
  .object({
    policyVersion: z.number().int(),
    requiresApproval: z.boolean(),
    steps: z.array(z.object({ stage: z.string(), requiredScope: z.string(), minApprovers: z.number().int() }).strict()),
    currency: z.string().optional(),
  })
  .strict();
export type OrderApprovalPlanResponse = z.infer<typeof orderApprovalPlanResponse>;

/** One order as /v1 returns it. Order value, currency and patient reference are never stored, so never shown. */
export const orderResponse = z
  .object({
    orderId: z.string(),
    number: z.number().int(),
    type: orderType,
    status: orderStatus,
    requesterId: z.string(),
    clinicId: z.string(),
    destinationWarehouseId: z.string(),
    preferredSourceWarehouseId: z.string().optional(),
    justification: z.string().optional(),
    lines: z.array(orderLineResponse),
    approvalPlan: orderApprovalPlanResponse.optional(),
    /** Grows by one every time the status changes; 1 once drafted. */
    version: z.number().int(),
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

/** A list row: the item and its creation sequence, which the API signs into the cursor. */
export const orderListRow = orderListItem.extend({ seq: z.bigint() }).transform(({ seq, ...item }) => ({ seq, item }));
export type OrderListRow = z.infer<typeof orderListRow>;
