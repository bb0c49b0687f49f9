import { z } from 'zod';
import { approvalBands, drillDownTypes, metricKeys, trendGranularities, type DayWindow, type MetricKey, type TrendGranularity } from './definitions.js';
import type { AnalyticsCaps } from '../config/analyticsCaps.js';

/**
 * The figures an analytics read produces, before any rendering (labels, evidence ids). Both the
 * projection's queries and the verifying fold produce exactly these shapes, and evidence records
 * store them as `recorded`: two results are the same figure when their canonical JSON is equal.
 * Language never enters a result.
 */

export const breakdownRow = z
  .object({
    dimension: z.string(),
    value: z.number().nullable(),
    unit: z.string(),
    /** APPROVAL_BACKLOG bands. */
    minAgeHours: z.number().int().optional(),
    maxAgeHours: z.number().int().nullable().optional(),
    /** ORDER_CYCLE_TIME stages: samples behind the average. */
    samples: z.number().int().optional(),
    /** CONSUMPTION_TREND: the item's current name. */
    name: z.string().optional(),
  })
  .strict();
export type BreakdownRow = z.infer<typeof breakdownRow>;

export const metricResult = z
  .object({
    metric: z.enum(metricKeys),
    value: z.number().nullable(),
    unit: z.string(),
    breakdown: z.array(breakdownRow),
    truncated: z.boolean(),
  })
  .strict();
export type MetricResult = z.infer<typeof metricResult>;

export type MetricParams = {
  /** Only for ORDER_CYCLE_TIME and CONSUMPTION_TREND. */
  readonly window?: DayWindow;
  readonly caps: AnalyticsCaps;
};

const lowStockReference = z
  .object({
    catalogItemId: z.string(),
    warehouseId: z.string(),
    available: z.number().int(),
    reorderPoint: z.number().int(),
    unitOfMeasure: z.string(),
  })
  .strict();
const expiringReference = z
  .object({
    boxId: z.string(),
    catalogItemId: z.string(),
    warehouseId: z.string(),
    expiresOn: z.string(),
    onHand: z.number().int(),
    unitOfMeasure: z.string(),
  })
  .strict();
const deliveryExceptionReference = z
  .object({ orderId: z.string(), orderNumber: z.number().int(), exceptionId: z.string(), reasonCode: z.string() })
  .strict();
const discrepancyReference = z
  .object({
    orderId: z.string(),
    orderNumber: z.number().int(),
    lineId: z.string(),
    catalogItemId: z.string(),
    expectedQty: z.number().int(),
    receivedQty: z.number().int(),
    reasonCode: z.string(),
  })
  .strict();
const approvalReference = z
  .object({
    orderId: z.string(),
    orderNumber: z.number().int(),
    clinicId: z.string(),
    band: z.enum(approvalBands.map((b) => b.band) as [string, ...string[]]),
  })
  .strict();

const exceptionBase = { priority: z.number().int(), drillDownType: z.enum(drillDownTypes), drillDownId: z.string(), detectedAt: z.string() };
export const exceptionItem = z.discriminatedUnion('metric', [
  z.object({ metric: z.literal('LOW_STOCK'), ...exceptionBase, reference: lowStockReference }).strict(),
  z.object({ metric: z.literal('EXPIRING_STOCK'), ...exceptionBase, reference: expiringReference }).strict(),
  z.object({ metric: z.literal('DELIVERY_EXCEPTIONS'), ...exceptionBase, reference: deliveryExceptionReference }).strict(),
  z.object({ metric: z.literal('RECEIPT_DISCREPANCIES'), ...exceptionBase, reference: discrepancyReference }).strict(),
  z.object({ metric: z.literal('APPROVAL_BACKLOG'), ...exceptionBase, reference: approvalReference }).strict(),
]);
export type ExceptionItem = z.infer<typeof exceptionItem>;
/** The metrics that contribute to the exceptions report. */
export const exceptionMetrics = ['DELIVERY_EXCEPTIONS', 'EXPIRING_STOCK', 'LOW_STOCK', 'RECEIPT_DISCREPANCIES', 'APPROVAL_BACKLOG'] as const satisfies readonly MetricKey[];

export const exceptionsResult = z
  .object({ total: z.number().int(), truncated: z.boolean(), exceptions: z.array(exceptionItem) })
  .strict();
export type ExceptionsResult = z.infer<typeof exceptionsResult>;
/**
 * `catalogItemId` narrows the report to the stock exceptions (LOW_STOCK, EXPIRING_STOCK) of one
 * item: every one of them, whatever it drills down to, and no exception of another kind.
 */
export type ExceptionsParams = { readonly catalogItemId?: string; readonly cap: number };
/** The exception metrics that are about one item's stock: the only ones an item filter keeps. */
export const stockExceptionMetrics = ['EXPIRING_STOCK', 'LOW_STOCK'] as const satisfies readonly MetricKey[];

/**
 * What tells two exceptions of one metric apart once priority, detectedAt, drill-down and metric
 * are equal: the stock level's warehouse, the delivery exception's id, the discrepancy's line,
 * reason and quantities. Expiring boxes and pending approvals are told apart by their drill-down.
 */
function sourceKey(item: ExceptionItem): readonly (string | number)[] {
  switch (item.metric) {
    case 'LOW_STOCK':
      return [item.reference.warehouseId];
    case 'EXPIRING_STOCK':
      return [];
    case 'DELIVERY_EXCEPTIONS':
      return [item.reference.exceptionId];
    case 'RECEIPT_DISCREPANCIES':
      return [item.reference.lineId, item.reference.reasonCode, item.reference.expectedQty, item.reference.receivedQty];
    case 'APPROVAL_BACKLOG':
      return [];
  }
}

function compareKeys(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const x = a[i] ?? '';
    const y = b[i] ?? '';
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : compareBytes(String(x), String(y));
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

const beyondSurrogates = /[\uD800-\uFFFF]/;

/**
 * Byte order of UTF-8, as Postgres orders COLLATE "C" text. Below U+D800, UTF-16 code unit order
 * is code point order, which is UTF-8 byte order, so only strings with higher code units are
 * encoded (sorting a long exceptions list spent most of its time encoding).
 */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  if (beyondSurrogates.test(a) || beyondSurrogates.test(b)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : 1;
}

/**
 * The report's one total order: priority descending; then detectedAt ascending (oldest first);
 * then drillDownType, drillDownId and metric in byte order; then the metric's own key (see
 * sourceKey). Two exceptions equal in all of these are equal as JSON too, so the order of a list
 * never depends on how it was read. Each source's scan reads its rows in this same order, so the
 * cap cuts the ordered list.
 */
export function compareExceptions(a: ExceptionItem, b: ExceptionItem): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.detectedAt !== b.detectedAt) return a.detectedAt < b.detectedAt ? -1 : 1;
  return (
    compareBytes(a.drillDownType, b.drillDownType) ||
    compareBytes(a.drillDownId, b.drillDownId) ||
    compareBytes(a.metric, b.metric) ||
    compareKeys(sourceKey(a), sourceKey(b))
  );
}

/**
 * Merges each source's first cap+1 exceptions (in report order) into the report: the first `cap`
 * of all, `total` the number found, truncated when more than `cap` were found.
 */
export function mergeExceptionSources(sources: readonly (readonly ExceptionItem[])[], cap: number): ExceptionsResult {
  const all = sources.flat().sort(compareExceptions);
  return { total: all.length, truncated: all.length > cap, exceptions: all.slice(0, cap) };
}

export const comparisonClinic = z
  .object({
    clinicId: z.string(),
    clinicName: z.string(),
    clinicStatus: z.string(),
    totalOrders: z.number().int(),
    pendingApprovalOrders: z.number().int(),
  })
  .strict();
export const comparisonResult = z.object({ truncated: z.boolean(), clinics: z.array(comparisonClinic) }).strict();
export type ComparisonResult = z.infer<typeof comparisonResult>;
export type ComparisonParams = { readonly cap: number };

export const trendPoint = z
  .object({ periodStart: z.string(), periodEnd: z.string(), quantity: z.number().int(), movements: z.number().int() })
  .strict();
export const trendSeries = z
  .object({ catalogItemId: z.string(), name: z.string(), unitOfMeasure: z.string(), points: z.array(trendPoint) })
  .strict();
export const trendResult = z
  .object({ granularity: z.enum(trendGranularities), truncated: z.boolean(), series: z.array(trendSeries) })
  .strict();
export type TrendResult = z.infer<typeof trendResult>;
export type TrendParams = { readonly window: DayWindow; readonly granularity: TrendGranularity; readonly cap: number };

/**
 * The figures every reader computes, from projections (AnalyticsReader in projections/analytics)
 * or from the event log (the fold). `asOf` is an ISO timestamp with milliseconds and Z.
 */
export type AnalyticsComputer = {
  metric(key: MetricKey, params: MetricParams, asOf: string): Promise<MetricResult>;
  exceptions(params: ExceptionsParams, asOf: string): Promise<ExceptionsResult>;
  comparison(params: ComparisonParams): Promise<ComparisonResult>;
  trend(params: TrendParams): Promise<TrendResult>;
};
