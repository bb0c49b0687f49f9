import type { z } from 'zod';
import type { OrderStatus } from '../../events/index.js';
import type { orderLine } from '../../events/orders.js';
import type { ApprovalPlan } from '../approvalPolicy.js';
import type { Box, Clinic, Item, Warehouse } from './tenantWorld.js';

export type OrderLine = z.infer<typeof orderLine>;
export type DiscrepancyReason = 'short' | 'over' | 'damaged' | 'wrong_item' | 'expired';
export type ExceptionReason = 'damaged' | 'lost' | 'delayed' | 'refused' | 'temperature' | 'wrong_address';

/** What will happen to an order, decided when it is drafted (so one draw decides its whole path). */
export type OrderFate = {
  /** Never submitted: cancelled some days later (or still a draft at asOf). */
  readonly abandon: boolean;
  readonly cancelAfter?: 'submitted' | 'approved' | 'allocated';
  readonly rejectAtStage?: number;
  readonly slowApproval: boolean;
  readonly exception?: { readonly reasonCode: ExceptionReason; readonly resolution: 'redelivered' | 'written_off' | 'unresolved' };
  readonly discrepancy?: DiscrepancyReason;
  /** The order stays in this status (an example left open at asOf). */
  readonly stopAt?: OrderStatus;
  /** Minutes instead of hours between steps (examples created shortly before asOf). */
  readonly fast: boolean;
};

export type Allocation = {
  readonly lineId: string;
  readonly box: Box;
  readonly quantity: number;
  readonly splitId: string | undefined;
  /** Serials that left the source box at dispatch. */
  serials?: string[] | undefined;
};

export type SimOrder = {
  readonly id: string;
  readonly number: number;
  readonly type: 'general' | 'clinical';
  readonly clinic: Clinic;
  readonly requesterId: string;
  readonly destination: Warehouse;
  source: Warehouse;
  readonly lines: readonly OrderLine[];
  readonly lineItems: ReadonlyMap<string, Item>;
  readonly value: number | undefined;
  plan: ApprovalPlan | undefined;
  status: OrderStatus;
  readonly fate: OrderFate;
  allocations: Allocation[];
  allocationAttempts: number;
  fulfillmentId: string | undefined;
  onOrderReleased: boolean;
  /** Called with the boxes registered at the destination (surgical cases reserve them). */
  readonly onReceived?: (boxes: readonly Box[]) => void;
};
