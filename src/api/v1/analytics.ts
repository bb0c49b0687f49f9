import {
  briefingPeriods,
  defaultWindow,
  definitionVersion,
  maxTrendWindowDays,
  trendGranularities,
  windowMetrics,
  type MetricKey,
} from '../../analytics/definitions.js';
import { dimensionLabel, metricDefinitions, metricLabel } from '../../analytics/labels.js';
import { exceptionMetrics, stockExceptionMetrics, type ComparisonResult, type ExceptionsResult, type MetricResult, type TrendResult } from '../../analytics/results.js';
import { subjectOfMetric, trendSubject, type Subject, type TrendSubject } from '../../analytics/subjects.js';
import { isoUtc } from '../../platform/clock.js';
import { z } from '../../platform/zodOpenApi.js';
import { computeWithEvidence, resultAt } from '../../reporting/analyticsReads.js';
import { composeBriefing } from '../../reporting/briefing.js';
import { exceptionItemFilter, resolveWindow, windowBoundParameter } from './analyticsParameters.js';
import {
  backlogResponse,
  briefingResponse,
  comparisonResponse,
  cycleTimeResponse,
  exceptionsResponse,
  metricKey,
  metricResponse,
  trendResponse,
} from './analyticsSchemas.js';
import { defineOperation, type OperationContext } from './operation.js';

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
  const { computed } = await computeWithEvidence(context.db, context.principal.tenantId, asOf, [subject], context.primary);
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
    `One metric. State metrics describe the workspace at \`asOf\`; \`from\` and \`to\` are validated and do not change them. Window metrics (${windowMetrics.join(', ')}) cover the whole UTC days from \`from\` (inclusive) to \`to\` (exclusive), by default the 30 days ending today.`,
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
    const { computed } = await computeWithEvidence(context.db, context.principal.tenantId, asOf, [report, ...metricSubjects], context.primary);
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
      storeTo: context.primary,
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
