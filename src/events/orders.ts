import { z } from 'zod';
import { code, currency, id, maxApprovalSteps, maxOrderLines, minorUnits, name, positiveQuantity, text } from './primitives.js';
import { unitOfMeasure } from './catalog.js';

export const orderType = z.enum(['general', 'clinical']);

/** Every order status of the specification, in lifecycle order. */
export const orderStatus = z.enum([
  'draft',
  'submitted',
  'pending_approval',
  'approved',
  'rejected',
  'cancelled',
  'allocated',
  'picking',
  'dispatched',
  'delivered',
  'exception',
  'received',
  'partially_fulfilled',
  'closed',
]);
export type OrderStatus = z.infer<typeof orderStatus>;

export const orderLine = z
  .object({
    lineId: id,
    catalogItemId: id,
    sku: code,
    name,
    requestedQty: positiveQuantity,
    unitOfMeasure,
    categoryId: id,
    highValue: z.boolean(),
    unitCost: minorUnits.nonnegative().optional(),
    currency: currency.optional(),
  })
  .strict();

export const approvalStep = z
  .object({ stage: code, requiredScope: code, minApprovers: z.number().int().positive() })
  .strict();

export const approvalPlan = z
  .object({
    policyVersion: z.number().int().positive(),
    requiresApproval: z.boolean(),
    steps: z.array(approvalStep).max(maxApprovalSteps),
    evaluatedValue: minorUnits.optional(),
    currency: currency.optional(),
  })
  .strict();

/**
 * The order stream, up to the hand-over to fulfillment. Dispatch, delivery, exception, receipt and
 * closure are recorded on the order's fulfillment (custody) stream, and move the order's status
 * from there. `value`, `currency`, `patientRef` and the plan's `evaluatedValue` are in the events
 * but never in a /v1 answer.
 */
export const orderEvents = {
  OrderDrafted: z
    .object({
      orderId: id,
      number: z.number().int().positive(),
      type: orderType,
      requesterId: id,
      clinicId: id,
      destinationWarehouseId: id,
      preferredSourceWarehouseId: id.optional(),
      justification: text.min(1).optional(),
      patientRef: z.string().min(1).optional(),
      lines: z.array(orderLine).min(1).max(maxOrderLines),
      value: minorUnits.nonnegative().optional(),
      currency: currency.optional(),
      /** How many lines the draft has (v2): a reader can tell a complete draft from a cut one. */
      lineCount: z.number().int().positive(),
    })
    .strict()
    .refine((draft) => draft.lineCount === draft.lines.length, { message: 'lineCount is the number of lines', path: ['lineCount'] }),
  OrderSubmitted: z.object({ orderId: id, submittedBy: id, approvalPlan }).strict(),
  OrderApprovalRequested: z.object({ orderId: id, stage: z.string().min(1) }).strict(),
  OrderApprovalGranted: z.object({ orderId: id, stage: z.string().min(1), approverId: id, comment: z.string().optional() }).strict(),
  OrderApproved: z.object({ orderId: id }).strict(),
  OrderRejected: z.object({ orderId: id, stage: z.string().min(1), approverId: id, reason: z.string().min(1) }).strict(),
  OrderCancelled: z.object({ orderId: id, cancelledBy: id, reason: z.string().min(1).optional() }).strict(),
  OrderAllocated: z
    .object({
      orderId: id,
      sourceWarehouseId: id,
      allocations: z.array(z.object({ lineId: id, boxId: id, quantity: positiveQuantity }).strict()).min(1),
    })
    .strict(),
  OrderPickingStarted: z.object({ orderId: id, pickerId: id }).strict(),
} as const;
