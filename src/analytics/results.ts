import { maxAnalyticsCaps, type AnalyticsCaps } from '../config/analyticsCaps.js';
import { jsonInteger, responseDate, responseTimestamp } from '../events/responseFields.js';
import { z } from '../platform/zodOpenApi.js';
import { approvalBands, drillDownTypes, figureUnits, metricKeys, trendGranularities, type DayWindow, type MetricKey, type TrendGranularity } from './definitions.js';

/**
 * The figures an analytics read produces, before any rendering (labels, evidence ids). Both the
 * projection's queries and the verifying fold produce exactly these shapes, and evidence records
 * store them as `recorded`: two results are the same figure when their canonical JSON is equal.
 * Language never enters a result. The shapes carry the bounds and meanings the OpenAPI document
 * states: /v1 answers are built from them (src/api/v1/analyticsSchemas.ts), never restated.
 */

const referenceId = z.string().max(200);
const reasonCode = z.string().max(100);
const quantity = jsonInteger();
const count = jsonInteger(0);

export const figureValue = z.number().nullable().openapi({ description: 'The number; null only when an average had no sample.' });
export const figureUnit = z
  .string()
  .max(50)
  .openapi({ description: `${figureUnits.map((unit) => `\`${unit}\``).join(', ')}, or the catalog unit of measure of a supply.` });

export const breakdownRow = z
  .object({
    dimension: z.string().max(200).openapi({ description: 'Part of the metric: an age band, a cycle stage, or the catalog item id of a consumption series.' }),
    value: figureValue,
    unit: figureUnit,
    minAgeHours: z.number().int().min(0).max(168).optional().openapi({ format: 'int32', description: 'APPROVAL_BACKLOG: lower bound of the band (inclusive).' }),
    maxAgeHours: z.number().int().min(24).max(168).nullable().optional().openapi({ format: 'int32', description: 'APPROVAL_BACKLOG: upper bound (exclusive); null for the open band.' }),
    samples: count.optional().openapi({ description: 'ORDER_CYCLE_TIME: stages behind the average.' }),
    /** CONSUMPTION_TREND: the item's current name (a label; /v1 sends the label instead). */
    name: z.string().optional(),
  })
  .strict();
export type BreakdownRow = z.infer<typeof breakdownRow>;

export const metricResult = z
  .object({
    metric: z.enum(metricKeys),
    value: figureValue,
    unit: figureUnit,
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

/** What each exception metric points at; the component names are those of the OpenAPI document. */
export const exceptionReferences = {
  LOW_STOCK: z
    .object({ catalogItemId: referenceId, warehouseId: referenceId, available: quantity, reorderPoint: quantity, unitOfMeasure: figureUnit })
    .strict()
    .openapi('LowStockReference'),
  EXPIRING_STOCK: z
    .object({ boxId: referenceId, catalogItemId: referenceId, warehouseId: referenceId, expiresOn: responseDate, onHand: quantity, unitOfMeasure: figureUnit })
    .strict()
    .openapi('ExpiringStockReference'),
  DELIVERY_EXCEPTIONS: z
    .object({ orderId: referenceId, orderNumber: quantity, exceptionId: referenceId, reasonCode })
    .strict()
    .openapi('DeliveryExceptionReference'),
  RECEIPT_DISCREPANCIES: z
    .object({
      orderId: referenceId,
      orderNumber: quantity,
      lineId: referenceId,
      catalogItemId: referenceId,
      expectedQty: quantity,
      receivedQty: quantity,
      reasonCode,
    })
    .strict()
    .openapi('ReceiptDiscrepancyReference'),
  APPROVAL_BACKLOG: z
    .object({ orderId: referenceId, orderNumber: quantity, clinicId: referenceId, band: z.enum(approvalBands.map((b) => b.band) as [string, ...string[]]) })
    .strict()
    .openapi('PendingApprovalReference'),
} as const;

export const exceptionBase = {
  priority: z.number().int().min(0).max(100).openapi({ format: 'int32', description: 'Higher is more urgent; the list is ordered by priority, highest first.' }),
  drillDownType: z.enum(drillDownTypes).openapi({
    description: 'What `drillDownId` names: `order` (GET /v1/orders/{id}), `fulfillment` (GET /v1/fulfillments/{orderId}), `box` (GET /v1/inventory/boxes/{id}), `catalog_item` (GET /v1/catalog/items/{id}). New values may be added.',
  }),
  drillDownId: referenceId,
  detectedAt: responseTimestamp.openapi({ description: 'When the condition began.' }),
};
export const exceptionItem = z.discriminatedUnion('metric', [
  z.object({ metric: z.literal('LOW_STOCK'), ...exceptionBase, reference: exceptionReferences.LOW_STOCK }).strict(),
  z.object({ metric: z.literal('EXPIRING_STOCK'), ...exceptionBase, reference: exceptionReferences.EXPIRING_STOCK }).strict(),
  z.object({ metric: z.literal('DELIVERY_EXCEPTIONS'), ...exceptionBase, reference: exceptionReferences.DELIVERY_EXCEPTIONS }).strict(),
  z.object({ metric: z.literal('RECEIPT_DISCREPANCIES'), ...exceptionBase, reference: exceptionReferences.RECEIPT_DISCREPANCIES }).strict(),
  z.object({ metric: z.literal('APPROVAL_BACKLOG'), ...exceptionBase, reference: exceptionReferences.APPROVAL_BACKLOG }).strict(),
]);
export type ExceptionItem = z.infer<typeof exceptionItem>;
/** The metrics that contribute to the exceptions report. */
export const exceptionMetrics = ['DELIVERY_EXCEPTIONS', 'EXPIRING_STOCK', 'LOW_STOCK', 'RECEIPT_DISCREPANCIES', 'APPROVAL_BACKLOG'] as const satisfies readonly MetricKey[];

export const exceptionsResult = z
  .object({
    total: count.openapi({ description: 'Exceptions found (with `catalogItemId`, that item\'s stock exceptions); a lower bound when `truncated` is true.' }),
    truncated: z.boolean(),
    exceptions: z.array(exceptionItem),
  })
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
    clinicId: referenceId,
    clinicName: z.string().max(200),
    clinicStatus: z.string().max(50).openapi({ description: 'For example `active`.' }),
    totalOrders: count,
    pendingApprovalOrders: count,
  })
  .strict()
  .openapi('ClinicComparisonRow');
export const comparisonResult = z.object({ truncated: z.boolean(), clinics: z.array(comparisonClinic) }).strict();
export type ComparisonResult = z.infer<typeof comparisonResult>;
export type ComparisonParams = { readonly cap: number };

export const trendPoint = z
  .object({
    periodStart: responseTimestamp,
    periodEnd: responseTimestamp,
    quantity: quantity.openapi({ description: 'Quantity consumed, in `unitOfMeasure`.' }),
    movements: count,
  })
  .strict()
  .openapi('ConsumptionPoint');
export const trendSeries = z
  .object({ catalogItemId: referenceId, name: z.string().max(200), unitOfMeasure: figureUnit, points: z.array(trendPoint).max(maxAnalyticsCaps.trend) })
  .strict()
  .openapi('ConsumptionSeries');
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
