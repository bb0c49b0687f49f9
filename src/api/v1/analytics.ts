import { computeWithEvidence, resultAt } from '../../reporting/analyticsReads.js';
import { composeBriefing } from '../../reporting/briefing.js';
import {
  approvalBands,
  briefingPeriods,
  cycleStages,
  defaultWindow,
  definitionVersion,
  drillDownTypes,
  maxTrendWindowDays,
  metricKeys,
  trendGranularities,
  type MetricKey,
} from '../../analytics/definitions.js';
import { dimensionLabel, metricDefinitions, metricLabel } from '../../analytics/labels.js';
import { exceptionMetrics, stockExceptionMetrics, type ComparisonResult, type ExceptionsResult, type MetricResult, type TrendResult } from '../../analytics/results.js';
import { maxAnalyticsCaps } from '../../config/analyticsCaps.js';
import { subjectOfMetric, trendSubject, type Subject, type TrendSubject } from '../../analytics/subjects.js';
import { isoUtc } from '../../platform/clock.js';
import { z } from '../../platform/zodOpenApi.js';
import { responseDate, responseTimestamp } from '../../events/responseFields.js';
import { defineOperation, type OperationContext } from './operation.js';
import { exceptionItemFilter, resolveWindow, windowBoundParameter } from './analyticsParameters.js';

// ── Shapes ─────────────────────────────────────────────────────────────────────────────────────
const evidenceId = z.string().max(400).openapi({
  description:
    'Reproducible reference of the figure, a content address: a digest of the workspace, the definition version, what was computed with its resolved parameters (a window as its whole UTC days, filters, scan caps), the projection checkpoint the figure was read at, and the value(s) served. The instant of the request and its language never enter it: the same figure at the same checkpoint has the same id in every answer that carries it (the metric, the briefing in any language, the briefing CSV), and a changed figure or a later checkpoint gives another. An id keeps verifying (`supply-api evidence verify`, which recomputes the figure from the event log) for as long as the evidence retention after the last answer that carried it.',
});
const common = {
  timezone: z.literal('UTC').openapi({ description: 'Every time and day boundary of analytics is UTC.' }),
  asOf: responseTimestamp.openapi({ description: 'When the figures were computed.' }),
  freshness: z.literal('live').openapi({ description: 'Figures are read from projections kept up to date continuously.' }),
  evidenceId,
  truncated: z.boolean().openapi({ description: 'True when a bounded scan reached its cap: figures are then lower bounds, lists a prefix.' }),
};
const windowSchema = z
  .object({
    from: responseTimestamp.openapi({ description: 'First instant of the window (UTC midnight, inclusive).' }),
    to: responseTimestamp.openapi({ description: 'End of the window (UTC midnight, exclusive).' }),
  })
  .strict()
  .openapi('AnalyticsWindow', { description: 'A window of whole UTC days: `from` inclusive, `to` exclusive.' });
const metricKey = z.enum(metricKeys).openapi('MetricKey', {
  description:
    'Metric keys. State metrics (at `asOf`): LOW_STOCK, EXPIRING_STOCK, PENDING_ORDERS, APPROVAL_BACKLOG, DELIVERY_EXCEPTIONS, RECEIPT_DISCREPANCIES. Window metrics: ORDER_CYCLE_TIME, CONSUMPTION_TREND. New keys may be added.',
});
const unit = z.string().max(50).openapi({ description: '`count`, `orders`, `movements`, `hours`, or the catalog unit of measure of a supply.' });
const figureValue = z.number().nullable().openapi({ description: 'The number; null only when an average had no sample.' });
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64' });
const label = z.string().max(300).openapi({ description: 'Human label in the language of `Accept-Language` (en, es, pt); not a contract.' });
const definitionFields = {
  definition: z.string().max(1000).openapi({ description: 'What the figure counts, in English.' }),
  definitionVersion: z.number().int().min(1).max(1000).openapi({ format: 'int32', description: 'Version of the definition; it changes when the meaning does.' }),
};

const breakdownRowSchema = z
  .object({
    dimension: z.string().max(200).openapi({ description: 'Part of the metric: an age band, a cycle stage, or the catalog item id of a consumption series.' }),
    label,
    value: figureValue,
    unit,
    minAgeHours: z.number().int().min(0).max(168).optional().openapi({ format: 'int32', description: 'APPROVAL_BACKLOG: lower bound of the band (inclusive).' }),
    maxAgeHours: z.number().int().min(24).max(168).nullable().optional().openapi({ format: 'int32', description: 'APPROVAL_BACKLOG: upper bound (exclusive); null for the open band.' }),
    samples: count.optional().openapi({ description: 'ORDER_CYCLE_TIME: stages behind the average.' }),
  })
  .strict()
  .openapi('MetricBreakdownRow');

const metricResponse = z
  .object({
    metric: metricKey,
    ...definitionFields,
    label,
    unit,
    value: figureValue,
    window: windowSchema.optional().openapi({ description: 'Window metrics only.' }),
    breakdown: z.array(breakdownRowSchema).max(maxAnalyticsCaps.trend),
    ...common,
  })
  .strict()
  .openapi('Metric', {
    description:
      'One metric. `value` is the headline figure; `breakdown` holds the rows of a multi-row metric (approval age bands, cycle stages, consumption per supply) and is empty otherwise.',
  });

const exceptionBase = {
  priority: z.number().int().min(0).max(100).openapi({ format: 'int32', description: 'Higher is more urgent; the list is ordered by priority, highest first.' }),
  drillDownType: z.enum(drillDownTypes).openapi({
    description: 'What `drillDownId` names: `order` (GET /v1/orders/{id}), `fulfillment` (GET /v1/fulfillments/{orderId}), `box` (GET /v1/inventory/boxes/{id}), `catalog_item` (GET /v1/catalog/items/{id}). New values may be added.',
  }),
  drillDownId: z.string().max(200),
  evidenceId: evidenceId.openapi({ description: 'Evidence of the metric this exception counts toward.' }),
  detectedAt: responseTimestamp.openapi({ description: 'When the condition began.' }),
};
const id = z.string().max(200);
const quantity = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64' });
const exceptionSchema = z
  .discriminatedUnion('metric', [
    z
      .object({
        metric: z.literal('LOW_STOCK'),
        ...exceptionBase,
        reference: z
          .object({ catalogItemId: id, warehouseId: id, available: quantity, reorderPoint: quantity, unitOfMeasure: unit })
          .strict()
          .openapi('LowStockReference'),
      })
      .strict(),
    z
      .object({
        metric: z.literal('EXPIRING_STOCK'),
        ...exceptionBase,
        reference: z
          .object({ boxId: id, catalogItemId: id, warehouseId: id, expiresOn: responseDate, onHand: quantity, unitOfMeasure: unit })
          .strict()
          .openapi('ExpiringStockReference'),
      })
      .strict(),
    z
      .object({
        metric: z.literal('DELIVERY_EXCEPTIONS'),
        ...exceptionBase,
        reference: z
          .object({ orderId: id, orderNumber: quantity, exceptionId: id, reasonCode: z.string().max(100) })
          .strict()
          .openapi('DeliveryExceptionReference'),
      })
      .strict(),
    z
      .object({
        metric: z.literal('RECEIPT_DISCREPANCIES'),
        ...exceptionBase,
        reference: z
          .object({
            orderId: id,
            orderNumber: quantity,
            lineId: id,
            catalogItemId: id,
            expectedQty: quantity,
            receivedQty: quantity,
            reasonCode: z.string().max(100),
          })
          .strict()
          .openapi('ReceiptDiscrepancyReference'),
      })
      .strict(),
    z
      .object({
        metric: z.literal('APPROVAL_BACKLOG'),
        ...exceptionBase,
        reference: z
          .object({ orderId: id, orderNumber: quantity, clinicId: id, band: z.enum(approvalBands.map((b) => b.band) as [string, ...string[]]) })
          .strict()
          .openapi('PendingApprovalReference'),
      })
      .strict(),
  ])
  .openapi('AnalyticsException', { description: 'One exception; `reference` has the shape of its `metric`.' });

const exceptionsResponse = z
  .object({
    total: count.openapi({ description: 'Exceptions found (with `catalogItemId`, that item\'s stock exceptions); a lower bound when `truncated` is true.' }),
    filters: z.object({ catalogItemId: id.optional() }).strict().openapi('ExceptionFilters', { description: 'The filters applied, as sent.' }),
    exceptions: z.array(exceptionSchema).max(maxAnalyticsCaps.exceptions),
    ...common,
  })
  .strict()
  .openapi('ExceptionsReport');

const comparisonResponse = z
  .object({
    metric: z.literal('CLINIC_ORDER_COUNTS'),
    ...definitionFields,
    unit: z.literal('orders'),
    filters: z.object({}).strict().openapi('ComparisonFilters', { description: 'No filters today; kept for additive ones.' }),
    clinics: z
      .array(
        z
          .object({
            clinicId: id,
            clinicName: z.string().max(200),
            clinicStatus: z.string().max(50).openapi({ description: 'For example `active`.' }),
            totalOrders: count,
            pendingApprovalOrders: count,
          })
          .strict()
          .openapi('ClinicComparisonRow'),
      )
      .max(maxAnalyticsCaps.comparison),
    ...common,
  })
  .strict()
  .openapi('ClinicComparison', { description: 'Order counts per clinic, ordered by clinicId. Counts only: order value is never included.' });

const trendResponse = z
  .object({
    metric: z.literal('CONSUMPTION_TREND'),
    ...definitionFields,
    granularity: z.enum(trendGranularities),
    window: windowSchema,
    series: z
      .array(
        z
          .object({
            catalogItemId: id,
            name: z.string().max(200),
            unitOfMeasure: unit,
            points: z
              .array(
                z
                  .object({
                    periodStart: responseTimestamp,
                    periodEnd: responseTimestamp,
                    quantity: quantity.openapi({ description: 'Quantity consumed, in `unitOfMeasure`.' }),
                    movements: count,
                  })
                  .strict()
                  .openapi('ConsumptionPoint'),
              )
              .max(maxAnalyticsCaps.trend),
          })
          .strict()
          .openapi('ConsumptionSeries'),
      )
      .max(maxAnalyticsCaps.trend),
    ...common,
  })
  .strict()
  .openapi('ConsumptionTrend', {
    description:
      'Consumption per supply in its own unit, one series per (catalog item, unit of measure), ordered by catalogItemId. Points are days or ISO weeks (Monday to Sunday) clipped to the window; periods without consumption are omitted.',
  });

const backlogResponse = z
  .object({
    metric: z.literal('APPROVAL_BACKLOG'),
    ...definitionFields,
    unit: z.literal('orders'),
    totalPending: count,
    bands: z
      .array(
        z
          .object({
            band: z.string().max(50),
            label,
            minAgeHours: z.number().int().min(0).max(168).openapi({ format: 'int32' }),
            maxAgeHours: z.number().int().min(24).max(168).nullable().openapi({ format: 'int32', description: 'Exclusive upper bound; null for the open band.' }),
            count,
          })
          .strict()
          .openapi('ApprovalBacklogBand'),
      )
      .max(approvalBands.length),
    ...common,
  })
  .strict()
  .openapi('ApprovalBacklog');

const cycleTimeResponse = z
  .object({
    metric: z.literal('ORDER_CYCLE_TIME'),
    ...definitionFields,
    unit: z.literal('hours'),
    window: windowSchema,
    overallAverageHours: z.number().nullable().openapi({ description: 'Submitted to received; null without samples.' }),
    stages: z
      .array(
        z
          .object({
            stage: z.string().max(50),
            label,
            averageHours: z.number().nullable().openapi({ description: 'Null when no order completed the stage in the window.' }),
            samples: count,
          })
          .strict()
          .openapi('CycleStage'),
      )
      .max(cycleStages.length),
    ...common,
  })
  .strict()
  .openapi('CycleTime');

const briefingResponse = z
  .object({
    metric: z.literal('MANAGEMENT_BRIEFING'),
    ...definitionFields,
    period: z.enum(briefingPeriods),
    window: windowSchema,
    figures: z
      .array(
        z
          .object({
            metric: metricKey,
            dimension: z.string().max(200).optional().openapi({ description: 'Present on rows of a multi-row metric (age band, cycle stage, consumption series).' }),
            label,
            value: figureValue,
            unit,
            evidenceId: evidenceId.openapi({ description: 'Evidence of the source metric: the same id its analytics operation returns.' }),
          })
          .strict()
          .openapi('BriefingFigure'),
      )
      .max(maxAnalyticsCaps.trend + 20),
    ...common,
  })
  .strict()
  .openapi('Briefing');

// ── Operations ─────────────────────────────────────────────────────────────────────────────────
const tag = 'Analytics';
const scope = 'analytics:read';

function commonFields(asOf: string, evidence: string, truncated: boolean) {
  return { timezone: 'UTC' as const, asOf, freshness: 'live' as const, evidenceId: evidence, truncated };
}

function asOfNow(context: OperationContext): string {
  return isoUtc(context.clock.now());
}

/** Computes one subject at the request's asOf (validation that needs asOf runs in `subjectAt`). */
async function computeOne<T, S extends Subject = Subject>(context: OperationContext, subjectAt: (asOf: string) => S) {
  const asOf = asOfNow(context);
  const subject = subjectAt(asOf);
  const { computed } = await computeWithEvidence(context.db, context.principal.tenantId, asOf, [subject]);
  return { asOf, subject, ...resultAt<T>(computed, 0) };
}

function renderBreakdown(result: MetricResult, language: OperationContext['language']) {
  return result.breakdown.map((row) => ({
    dimension: row.dimension,
    label: dimensionLabel(result.metric, row.dimension, language, row.name),
    value: row.value,
    unit: row.unit,
    ...(row.minAgeHours === undefined ? {} : { minAgeHours: row.minAgeHours }),
    ...(row.maxAgeHours === undefined ? {} : { maxAgeHours: row.maxAgeHours }),
    ...(row.samples === undefined ? {} : { samples: row.samples }),
  }));
}

export const getMetricOperation = defineOperation({
  operationId: 'getMetric',
  method: 'get',
  path: '/v1/analytics/metrics/{metric}',
  tag,
  summary: 'Get one metric with evidence',
  description:
    'One metric. State metrics describe the workspace at `asOf`; `from` and `to` are validated and do not change them. Window metrics (ORDER_CYCLE_TIME, CONSUMPTION_TREND) cover the whole UTC days from `from` (inclusive) to `to` (exclusive), by default the 30 days ending today.',
  scope,
  params: z.object({ metric: metricKey }),
  query: z.object({ from: windowBoundParameter('from'), to: windowBoundParameter('to') }),
  response: metricResponse,
  responseName: 'Metric',
  problems: ['common.invalid_request'],
  handle: async (context, { params, query }) => {
    const metric = params.metric as MetricKey;
    const { asOf, subject, result, evidenceId: evidence } = await computeOne<MetricResult>(context, (at) =>
      subjectOfMetric(metric, resolveWindow(query.from, query.to, at), context.analyticsCaps),
    );
    return {
      metric,
      definition: metricDefinitions[metric],
      definitionVersion,
      label: metricLabel(metric, context.language),
      unit: result.unit,
      value: result.value,
      ...(subject.kind === 'metric' && subject.window ? { window: subject.window } : {}),
      breakdown: renderBreakdown(result, context.language),
      ...commonFields(asOf, evidence, result.truncated),
    };
  },
});

export const getExceptionsOperation = defineOperation({
  operationId: 'getExceptions',
  method: 'get',
  path: '/v1/analytics/exceptions',
  tag,
  summary: 'Exceptions that need attention',
  description:
    'Open delivery exceptions, expired and expiring stock, low stock, open receipt discrepancies and pending approvals, in one total order: `priority` descending; then `detectedAt` ascending (oldest first); then `drillDownType`, `drillDownId` and `metric` in byte order of their UTF-8 text; then, between exceptions of one metric that are still equal, the low-stock `reference.warehouseId`, the delivery exception\'s `reference.exceptionId`, or the discrepancy\'s `reference.lineId`, `reference.reasonCode`, `expectedQty` and `receivedQty`. Two reads with no new event between them list the same exceptions in the same order, except where time itself changes a priority (a box entering its last 7 days or expiring, an approval waiting 72 hours). The order is applied before the cap: at most the configured cap are listed, the first ones in this order, and `truncated` says when more exist. With `catalogItemId` the report lists only that item\'s stock exceptions (LOW_STOCK and EXPIRING_STOCK, whatever they drill down to), in the same order as in the full report; the other kinds are about orders rather than one item\'s stock and are left out. Poll it and compare `total` and `drillDownId`s to see what changed.',
  scope,
  query: z.object({ catalogItemId: exceptionItemFilter }),
  response: exceptionsResponse,
  responseName: 'ExceptionsReport',
  problems: ['common.invalid_request'],
  handle: async (context, { query }) => {
    const asOf = asOfNow(context);
    const caps = context.analyticsCaps;
    const filter = query.catalogItemId === undefined ? {} : { catalogItemId: query.catalogItemId };
    const report: Subject = { kind: 'exceptions', ...filter, cap: caps.exceptions };
    const listed = query.catalogItemId === undefined ? exceptionMetrics : stockExceptionMetrics;
    const metricSubjects = listed.map((metric) => subjectOfMetric(metric, undefined, caps));
    const { computed } = await computeWithEvidence(context.db, context.principal.tenantId, asOf, [report, ...metricSubjects]);
    const { result, evidenceId: evidence } = resultAt<ExceptionsResult>(computed, 0);
    const metricEvidence = new Map<string, string>(listed.map((metric, index) => [metric, resultAt<MetricResult>(computed, index + 1).evidenceId]));
    return {
      total: result.total,
      filters: filter,
      exceptions: result.exceptions.map((item) => ({ ...item, evidenceId: metricEvidence.get(item.metric) ?? evidence })),
      ...commonFields(asOf, evidence, result.truncated),
    };
  },
});

export const getClinicComparisonOperation = defineOperation({
  operationId: 'getClinicComparison',
  method: 'get',
  path: '/v1/analytics/clinics/comparison',
  tag,
  summary: 'Compare clinics by order counts',
  description:
    'Every clinic (location) with its total orders (any status) and the orders now awaiting approval, ordered by clinicId. Takes no parameters. Counts only: order value is never included.',
  scope,
  response: comparisonResponse,
  responseName: 'ClinicComparison',
  problems: [],
  handle: async (context) => {
    const { asOf, result, evidenceId: evidence } = await computeOne<ComparisonResult>(context, () => ({
      kind: 'comparison',
      cap: context.analyticsCaps.comparison,
    }));
    return {
      metric: 'CLINIC_ORDER_COUNTS',
      definition: 'Per clinic: every order of the clinic in any status (drafts included), and those now in pending_approval.',
      definitionVersion,
      unit: 'orders',
      filters: {},
      clinics: result.clinics,
      ...commonFields(asOf, evidence, result.truncated),
    };
  },
});

export const getConsumptionTrendOperation = defineOperation({
  operationId: 'getConsumptionTrend',
  method: 'get',
  path: '/v1/analytics/consumption-trend',
  tag,
  summary: 'Consumption per supply over time',
  description: `Consumption per supply in its own unit, by UTC day or ISO week. The window is at most ${maxTrendWindowDays} days; by default the 30 days ending today, by day.`,
  scope,
  query: z.object({
    from: windowBoundParameter('from'),
    to: windowBoundParameter('to'),
    granularity: z.enum(trendGranularities).optional().openapi({ description: 'Bucket size: `day` (default) or `week` (ISO weeks, Monday to Sunday, clipped to the window).' }),
  }),
  response: trendResponse,
  responseName: 'ConsumptionTrend',
  problems: ['common.invalid_request'],
  handle: async (context, { query }) => {
    const granularity = query.granularity ?? 'day';
    const { asOf, result, evidenceId: evidence, subject } = await computeOne<TrendResult, TrendSubject>(context, (at) =>
      trendSubject(resolveWindow(query.from, query.to, at, maxTrendWindowDays), granularity, context.analyticsCaps.trend),
    );
    const { window } = subject;
    return {
      metric: 'CONSUMPTION_TREND',
      definition: metricDefinitions.CONSUMPTION_TREND,
      definitionVersion,
      granularity,
      window,
      series: result.series,
      ...commonFields(asOf, evidence, result.truncated),
    };
  },
});

export const getApprovalBacklogOperation = defineOperation({
  operationId: 'getApprovalBacklog',
  method: 'get',
  path: '/v1/analytics/approval-backlog',
  tag,
  summary: 'Pending approvals by age band',
  description:
    'Orders awaiting approval grouped by how long they have waited: under 24 h, 24–72 h, 72–168 h, and an open band (maxAgeHours null). Takes no parameters. Its evidence is that of the APPROVAL_BACKLOG metric.',
  scope,
  response: backlogResponse,
  responseName: 'ApprovalBacklog',
  problems: [],
  handle: async (context) => {
    const { asOf, result, evidenceId: evidence } = await computeOne<MetricResult>(context, () =>
      subjectOfMetric('APPROVAL_BACKLOG', undefined, context.analyticsCaps),
    );
    return {
      metric: 'APPROVAL_BACKLOG',
      definition: metricDefinitions.APPROVAL_BACKLOG,
      definitionVersion,
      unit: 'orders',
      totalPending: result.value ?? 0,
      bands: result.breakdown.map((row) => ({
        band: row.dimension,
        label: dimensionLabel('APPROVAL_BACKLOG', row.dimension, context.language),
        minAgeHours: row.minAgeHours ?? 0,
        maxAgeHours: row.maxAgeHours ?? null,
        count: row.value ?? 0,
      })),
      ...commonFields(asOf, evidence, result.truncated),
    };
  },
});

export const getCycleTimeOperation = defineOperation({
  operationId: 'getCycleTime',
  method: 'get',
  path: '/v1/analytics/cycle-time',
  tag,
  summary: 'Average duration of each order stage',
  description:
    'Average hours of each order stage (submitted→approved, approved→dispatched, dispatched→delivered, delivered→received) over stages completed in the 30 UTC days ending today. Takes no parameters; for another window use GET /v1/analytics/metrics/ORDER_CYCLE_TIME with `from` and `to`, whose evidence this shares.',
  scope,
  response: cycleTimeResponse,
  responseName: 'CycleTime',
  problems: [],
  handle: async (context) => {
    const { asOf, result, evidenceId: evidence } = await computeOne<MetricResult>(context, (at) =>
      subjectOfMetric('ORDER_CYCLE_TIME', defaultWindow(at), context.analyticsCaps),
    );
    const window = defaultWindow(asOf);
    return {
      metric: 'ORDER_CYCLE_TIME',
      definition: metricDefinitions.ORDER_CYCLE_TIME,
      definitionVersion,
      unit: 'hours',
      window,
      overallAverageHours: result.value,
      stages: result.breakdown.map((row) => ({
        stage: row.dimension,
        label: dimensionLabel('ORDER_CYCLE_TIME', row.dimension, context.language),
        averageHours: row.value,
        samples: row.samples ?? 0,
      })),
      ...commonFields(asOf, evidence, result.truncated),
    };
  },
});

export const getBriefingOperation = defineOperation({
  operationId: 'getBriefing',
  method: 'get',
  path: '/v1/analytics/briefing',
  tag,
  summary: 'Management briefing',
  description:
    'Every metric as figures with localized labels (Accept-Language: en, es, pt). State metrics are as of `asOf`; window metrics cover the period: `daily` is the UTC day of `asOf` so far, `weekly` that day and the six before it. Multi-row metrics (approval age bands, cycle stages, consumption per supply) give one figure per row with `dimension`. Each figure carries the evidence of its source metric.',
  scope,
  query: z.object({
    period: z.enum(briefingPeriods).optional().openapi({ description: '`daily` (default) or `weekly`.' }),
  }),
  response: briefingResponse,
  responseName: 'Briefing',
  problems: ['common.invalid_request'],
  handle: async (context, { query }) => {
    const briefing = await composeBriefing(context.db, context.principal.tenantId, {
      period: query.period ?? 'daily',
      asOf: asOfNow(context),
      caps: context.analyticsCaps,
      language: context.language,
    });
    return {
      metric: 'MANAGEMENT_BRIEFING',
      definition: 'Every metric key: state metrics at asOf, window metrics over the period, one figure per row of multi-row metrics.',
      definitionVersion,
      period: briefing.period,
      window: briefing.window,
      figures: briefing.figures,
      ...commonFields(briefing.asOf, briefing.evidenceId, briefing.truncated),
    };
  },
});

export const analyticsOperations = [
  getMetricOperation,
  getExceptionsOperation,
  getClinicComparisonOperation,
  getConsumptionTrendOperation,
  getApprovalBacklogOperation,
  getCycleTimeOperation,
  getBriefingOperation,
];
