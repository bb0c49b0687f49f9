import type { OrderStatus } from '../events/index.js';

/**
 * What every analytics figure means. The projection's SQL (projections/analytics) and the
 * independent fold that verifies evidence (src/analytics/fold) both compute from these
 * definitions; neither computes from the other. Changing a definition means bumping
 * `definitionVersion`, so that older evidence ids keep naming what they measured.
 */
export const definitionVersion = 1;

/** Metric keys served by GET /v1/analytics/metrics/{metric}, in briefing order. */
export const metricKeys = [
  'LOW_STOCK',
  'EXPIRING_STOCK',
  'PENDING_ORDERS',
  'APPROVAL_BACKLOG',
  'DELIVERY_EXCEPTIONS',
  'RECEIPT_DISCREPANCIES',
  'ORDER_CYCLE_TIME',
  'CONSUMPTION_TREND',
] as const;
export type MetricKey = (typeof metricKeys)[number];

/** Metrics that describe the state at `asOf`; the others sum a window of whole UTC days. */
export const stateMetrics: readonly MetricKey[] = [
  'LOW_STOCK',
  'EXPIRING_STOCK',
  'PENDING_ORDERS',
  'APPROVAL_BACKLOG',
  'DELIVERY_EXCEPTIONS',
  'RECEIPT_DISCREPANCIES',
];
export const windowMetrics: readonly MetricKey[] = ['ORDER_CYCLE_TIME', 'CONSUMPTION_TREND'];
/** Metrics whose figures are the rows of their breakdown (in a briefing and its CSV). */
export const multiRowMetrics: readonly MetricKey[] = ['APPROVAL_BACKLOG', 'ORDER_CYCLE_TIME', 'CONSUMPTION_TREND'];

/**
 * A window of whole UTC days: `from` inclusive, `to` exclusive, both UTC midnights as ISO strings
 * with milliseconds (`2026-11-01T00:00:00.000Z`).
 */
export type DayWindow = { readonly from: string; readonly to: string };

export const dayMs = 86_400_000;
export const hourMs = 3_600_000;

/** The UTC date (YYYY-MM-DD) of an instant. */
export function utcDate(instant: string | number): string {
  return new Date(instant).toISOString().slice(0, 10);
}

/** Midnight UTC of the day of `instant`, in ms. */
export function utcDayStartMs(instant: string | number): number {
  const ms = typeof instant === 'number' ? instant : Date.parse(instant);
  return Math.floor(ms / dayMs) * dayMs;
}

/**
 * A window as the figures use it: both bounds at the start of their UTC day (aggregates hold whole
 * days, and a day is in the window when from's day <= it < to's day). Subjects, and so evidence
 * ids, carry windows in this form whatever form the request gave.
 */
export function dayAlignedWindow(window: DayWindow): DayWindow {
  return { from: new Date(utcDayStartMs(window.from)).toISOString(), to: new Date(utcDayStartMs(window.to)).toISOString() };
}

/** The window a metric uses when the caller gives none: the 30 UTC days ending with asOf's day. */
export function defaultWindow(asOf: string, days = 30): DayWindow {
  const end = utcDayStartMs(asOf) + dayMs;
  return { from: new Date(end - days * dayMs).toISOString(), to: new Date(end).toISOString() };
}

/** Briefing periods: daily is asOf's UTC day so far; weekly is that day and the 6 before it. */
export const briefingPeriods = ['daily', 'weekly'] as const;
export type BriefingPeriod = (typeof briefingPeriods)[number];
export function briefingWindow(asOf: string, period: BriefingPeriod): DayWindow {
  return defaultWindow(asOf, period === 'daily' ? 1 : 7);
}

// ── LOW_STOCK ───────────────────────────────────────────────────────────────────────────────────
/**
 * A stock level is one (catalog item, warehouse) pair that has ever held a box of the item (a box
 * registered there or moved there). Its `available` is the sum of (onHand − reserved) over the
 * boxes of the item now in that warehouse whose status is `active` (quarantined, expired,
 * depleted and disposed boxes hold nothing usable). The level is LOW when the item's status is
 * `active`, the warehouse's status is `active`, and available < the item's reorderPoint.
 * Its detectedAt is the occurredAt of the event that made it low (it keeps that time while it
 * stays low; a level that stops being low and becomes low again gets the new time).
 */
export const usableBoxStatus = 'active';

// ── EXPIRING_STOCK ──────────────────────────────────────────────────────────────────────────────
/**
 * A box counts when it has an expiry date, onHand > 0, its status is not `depleted` or
 * `disposed`, and expiresOn <= asOf's UTC date + expiryWarningDays (already expired boxes
 * included). Its detectedAt is midnight UTC of (expiresOn − expiryWarningDays): when it entered
 * the warning window.
 */
export const expiryWarningDays = 30;
export const expiryIgnoredBoxStatuses: readonly string[] = ['depleted', 'disposed'];

/** The last expiry date (YYYY-MM-DD) that counts as expiring at `asOf`. */
export function expiryHorizon(asOf: string): string {
  return utcDate(utcDayStartMs(asOf) + expiryWarningDays * dayMs);
}

export function expiryDetectedAt(expiresOn: string): string {
  return new Date(Date.parse(`${expiresOn}T00:00:00.000Z`) - expiryWarningDays * dayMs).toISOString();
}

// ── PENDING_ORDERS and the clinic comparison ────────────────────────────────────────────────────
/** Placed and not yet dispatched: what the supply team still has to act on. */
export const pendingOrderStatuses: readonly OrderStatus[] = ['submitted', 'pending_approval', 'approved', 'allocated', 'picking'];
/** Clinic comparison: totalOrders counts every order of the clinic in any status (drafts too). */

// ── APPROVAL_BACKLOG ────────────────────────────────────────────────────────────────────────────
/**
 * Orders whose status is `pending_approval`, by how long they have waited: asOf − pendingSince,
 * where pendingSince is the occurredAt of the event that moved the order into pending_approval
 * from another status (further stages of the same plan do not restart the clock). A band holds
 * ages with minAgeHours <= age < maxAgeHours; the last band is open (maxAgeHours null).
 */
export const approvalBands = [
  { band: 'under_24h', minAgeHours: 0, maxAgeHours: 24 },
  { band: '24h_to_72h', minAgeHours: 24, maxAgeHours: 72 },
  { band: '72h_to_168h', minAgeHours: 72, maxAgeHours: 168 },
  { band: 'over_168h', minAgeHours: 168, maxAgeHours: null },
] as const;
export type ApprovalBand = (typeof approvalBands)[number]['band'];

export function approvalBandOf(ageMs: number): ApprovalBand {
  for (const band of approvalBands) {
    if (band.maxAgeHours === null || ageMs < band.maxAgeHours * hourMs) return band.band;
  }
  return 'over_168h';
}

// ── DELIVERY_EXCEPTIONS, RECEIPT_DISCREPANCIES ──────────────────────────────────────────────────
/**
 * A delivery exception is open from DeliveryExceptionRaised until DeliveryExceptionResolved with
 * the same exceptionId. A receipt discrepancy (one entry of FulfillmentReceived.discrepancies) is
 * open until the order's FulfillmentClosed. detectedAt: the occurredAt of the raising event.
 */

// ── ORDER_CYCLE_TIME ────────────────────────────────────────────────────────────────────────────
/**
 * Milestones are the first time an order enters a status group (envelope occurredAt):
 * submitted (OrderSubmitted), approved (OrderApproved), dispatched (FulfillmentDispatched),
 * delivered (FulfillmentDelivered), received (FulfillmentReceived, whatever its discrepancies).
 * A stage sample is taken when its `to` milestone is first reached and its `from` milestone
 * exists; it belongs to the UTC day of the `to` milestone and lasts (to − from) ms. The average of
 * a window is the sum of the durations of its samples / their count, in hours rounded to 2
 * decimals; null without samples. The headline value is the `submitted_to_received` stage.
 */
export const cycleMilestones = ['submitted', 'approved', 'dispatched', 'delivered', 'received'] as const;
export type CycleMilestone = (typeof cycleMilestones)[number];
export const cycleStages = [
  { stage: 'submitted_to_approved', from: 'submitted', to: 'approved' },
  { stage: 'approved_to_dispatched', from: 'approved', to: 'dispatched' },
  { stage: 'dispatched_to_delivered', from: 'dispatched', to: 'delivered' },
  { stage: 'delivered_to_received', from: 'delivered', to: 'received' },
] as const;
export const totalCycleStage = { stage: 'submitted_to_received', from: 'submitted', to: 'received' } as const;
/** Every stage kept by the aggregate: the four in the breakdown and the total. */
export const allCycleStages = [...cycleStages, totalCycleStage] as const;
export type CycleStage = (typeof allCycleStages)[number]['stage'];

export function averageHours(totalMs: number, samples: number): number | null {
  if (samples === 0) return null;
  return Math.round((totalMs / samples / hourMs) * 100) / 100;
}

// ── CONSUMPTION_TREND ───────────────────────────────────────────────────────────────────────────
/**
 * Consumption is the quantity taken out by `consume` movements (−quantityDelta), on the UTC day of
 * the movement's own occurredAt, per catalog item and the item's unitOfMeasure at the time the
 * movement is projected; returns are not netted. The headline value is the number of consume
 * movements in the window (unit `movements`); the breakdown has one row per (item, unit) with the
 * quantity, ordered by catalogItemId then unit, and the item's current name.
 * Weeks are ISO weeks (Monday to Sunday, UTC), clipped to the window.
 */
export const trendGranularities = ['day', 'week'] as const;
export type TrendGranularity = (typeof trendGranularities)[number];
export const maxTrendWindowDays = 366;

/** Start (UTC midnight, ms) of the bucket holding the day `dayStartMs`. */
export function bucketStartMs(dayStartMs: number, granularity: TrendGranularity): number {
  if (granularity === 'day') return dayStartMs;
  const weekday = (new Date(dayStartMs).getUTCDay() + 6) % 7; // Monday 0
  return dayStartMs - weekday * dayMs;
}

// ── Exceptions ──────────────────────────────────────────────────────────────────────────────────
/**
 * The exceptions report lists, highest priority first: open delivery exceptions, expiring stock,
 * low stock, open receipt discrepancies and pending approvals. Priorities differ between sources,
 * so that ties only happen inside one source; inside a priority the order is detectedAt
 * ascending, then drill-down, metric and the source's own key (see compareExceptions).
 */
export const exceptionPriorities = {
  deliveryException: 90,
  expired: 80,
  expiringWithin7Days: 70,
  stockOut: 65,
  lowStock: 55,
  receiptDiscrepancy: 50,
  expiringLater: 45,
  approvalOver72h: 40,
  approvalRecent: 30,
} as const;

/** Priority of an expiring box at asOf (expiresOn as YYYY-MM-DD). */
export function expiringPriority(expiresOn: string, asOf: string): number {
  const today = utcDate(asOf);
  if (expiresOn < today) return exceptionPriorities.expired;
  if (expiresOn <= utcDate(utcDayStartMs(asOf) + 7 * dayMs)) return exceptionPriorities.expiringWithin7Days;
  return exceptionPriorities.expiringLater;
}

/** Low stock with nothing available at all is a stock-out. */
export function lowStockPriority(available: number): number {
  return available <= 0 ? exceptionPriorities.stockOut : exceptionPriorities.lowStock;
}

export function approvalPriority(pendingSince: string, asOf: string): number {
  return Date.parse(asOf) - Date.parse(pendingSince) >= 72 * hourMs ? exceptionPriorities.approvalOver72h : exceptionPriorities.approvalRecent;
}

export const drillDownTypes = ['order', 'fulfillment', 'box', 'catalog_item'] as const;
export type DrillDownType = (typeof drillDownTypes)[number];

/** Units a figure can carry besides a catalog unit of measure. */
export const figureUnits = ['count', 'orders', 'movements', 'hours'] as const;
