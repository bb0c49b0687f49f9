import type { EventEnvelope, OrderStatus } from '../events/index.js';
import { orderStatusAfter } from '../events/orderStatusTransitions.js';
import type { ApprovalPlan } from './approvalPolicy.js';
import type { OrderLine } from './history/simOrder.js';

/** One order as its order stream and fulfillment stream tell it. */
export type OrderState = {
  readonly orderId: string;
  readonly number: number;
  readonly type: 'general' | 'clinical';
  readonly requesterId: string;
  readonly clinicId: string;
  readonly destinationWarehouseId: string;
  readonly preferredSourceWarehouseId: string | undefined;
  readonly justification: string | undefined;
  readonly patientRef: string | undefined;
  readonly lines: readonly OrderLine[];
  readonly value: number | undefined;
  readonly currency: string | undefined;
  readonly approvalPlan: ApprovalPlan | undefined;
  readonly status: OrderStatus;
  /** Number of status changes so far: 1 once drafted. */
  readonly version: number;
  /** Stages asked for, and the grants each received. */
  readonly requestedStages: readonly string[];
  readonly grants: readonly { readonly stage: string; readonly approverId: string }[];
  readonly sourceWarehouseId: string | undefined;
  readonly allocations: readonly { readonly lineId: string; readonly boxId: string; readonly quantity: number }[];
  readonly fulfillmentId: string | undefined;
  readonly openExceptionId: string | undefined;
  readonly receivedLines: readonly { readonly lineId: string; readonly catalogItemId: string; readonly receivedQty: number }[] | undefined;
  readonly hasDiscrepancies: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Every status the order entered, with when: for cycle times. */
  readonly statusHistory: readonly { readonly status: OrderStatus; readonly at: string }[];
};

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Folds the events of one order (its order stream, then its fulfillment stream) into its state.
 * Undefined until the order is drafted; events of other orders are ignored.
 */
export function orderState(events: readonly EventEnvelope[]): OrderState | undefined {
  let state: Mutable<OrderState> | undefined;
  for (const event of events) {
    if (state === undefined) {
      if (event.type !== 'OrderDrafted') continue;
      const d = event.data;
      state = {
        orderId: d.orderId,
        number: d.number,
        type: d.type,
        requesterId: d.requesterId,
        clinicId: d.clinicId,
        destinationWarehouseId: d.destinationWarehouseId,
        preferredSourceWarehouseId: d.preferredSourceWarehouseId,
        justification: d.justification,
        patientRef: d.patientRef,
        lines: d.lines,
        value: d.value,
        currency: d.currency,
        approvalPlan: undefined,
        status: 'draft',
        version: 1,
        requestedStages: [],
        grants: [],
        sourceWarehouseId: undefined,
        allocations: [],
        fulfillmentId: undefined,
        openExceptionId: undefined,
        receivedLines: undefined,
        hasDiscrepancies: false,
        createdAt: event.occurredAt,
        updatedAt: event.occurredAt,
        statusHistory: [{ status: 'draft', at: event.occurredAt }],
      };
      continue;
    }
    if (!('orderId' in event.data) || event.data.orderId !== state.orderId) continue;
    state.updatedAt = event.occurredAt;
    switch (event.type) {
      case 'OrderSubmitted':
        state.approvalPlan = event.data.approvalPlan;
        break;
      case 'OrderApprovalRequested':
        state.requestedStages = [...state.requestedStages, event.data.stage];
        break;
      case 'OrderApprovalGranted':
        state.grants = [...state.grants, { stage: event.data.stage, approverId: event.data.approverId }];
        break;
      case 'OrderAllocated':
        state.sourceWarehouseId = event.data.sourceWarehouseId;
        state.allocations = event.data.allocations;
        break;
      case 'FulfillmentDispatched':
        state.fulfillmentId = event.data.fulfillmentId;
        break;
      case 'DeliveryExceptionRaised':
        state.openExceptionId = event.data.exceptionId;
        break;
      case 'DeliveryExceptionResolved':
        state.openExceptionId = undefined;
        break;
      case 'FulfillmentReceived':
        state.receivedLines = event.data.lines;
        state.hasDiscrepancies = event.data.discrepancies.length > 0;
        break;
      default:
        break;
    }
    const status = orderStatusAfter(event);
    if (status !== undefined && status !== state.status) {
      state.status = status;
      state.version += 1;
      state.statusHistory = [...state.statusHistory, { status, at: event.occurredAt }];
    }
  }
  return state;
}
