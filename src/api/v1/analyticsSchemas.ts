import { approvalBands, briefingPeriods, cycleStages, metricKeys, stateMetrics, windowMetrics } from '../../analytics/definitions.js';
import { breakdownRow, comparisonClinic, exceptionBase, exceptionItem, exceptionsResult, figureUnit, figureValue, metricResult, trendResult, trendSeries } from '../../analytics/results.js';
import { maxAnalyticsCaps } from '../../config/analyticsCaps.js';
import { jsonInteger, responseTimestamp } from '../../events/responseFields.js';
import { z } from '../../platform/zodOpenApi.js';

/**
 * The /v1 answers of the analytics operations: the figures of src/analytics/results.ts, whose
 * fields, bounds and meanings come from there, with what an answer adds around them (labels in
 * the caller's language, definitions, windows, evidence ids).
 */

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
export const metricKey = z.enum(metricKeys).openapi('MetricKey', {
  description: `Metric keys. State metrics (at \`asOf\`): ${stateMetrics.join(', ')}. Window metrics: ${windowMetrics.join(', ')}. New keys may be added.`,
});
const count = jsonInteger(0);
const label = z.string().max(300).openapi({ description: 'Human label in the language of `Accept-Language` (en, es, pt); not a contract.' });
const definitionFields = {
  definition: z.string().max(1000).openapi({ description: 'What the figure counts, in English.' }),
  definitionVersion: z.number().int().min(1).max(1000).openapi({ format: 'int32', description: 'Version of the definition; it changes when the meaning does.' }),
};

// A row as sent: labelled, the item's name being part of the label.
const { dimension, name: _name, ...rowFigures } = breakdownRow.shape;
const breakdownRowSchema = z
  .object({ dimension, label, ...rowFigures })
  .strict()
  .openapi('MetricBreakdownRow');

export const metricResponse = z
  .object({
    metric: metricKey,
    ...definitionFields,
    label,
    unit: metricResult.shape.unit,
    value: metricResult.shape.value,
    window: windowSchema.optional().openapi({ description: 'Window metrics only.' }),
    breakdown: z.array(breakdownRowSchema).max(maxAnalyticsCaps.trend),
    ...common,
  })
  .strict()
  .openapi('Metric', {
    description:
      'One metric. `value` is the headline figure; `breakdown` holds the rows of a multi-row metric (approval age bands, cycle stages, consumption per supply) and is empty otherwise.',
  });

// An exception as sent: the result's exception with the evidence of the metric it counts toward.
const { detectedAt, ...exceptionHead } = exceptionBase;
const sentException = (option: (typeof exceptionItem.options)[number]) =>
  z
    .object({
      metric: option.shape.metric,
      ...exceptionHead,
      evidenceId: evidenceId.openapi({ description: 'Evidence of the metric this exception counts toward.' }),
      detectedAt,
      reference: option.shape.reference,
    })
    .strict();
const [firstException, ...otherExceptions] = exceptionItem.options;
const exceptionSchema = z
  .discriminatedUnion('metric', [sentException(firstException), ...otherExceptions.map(sentException)])
  .openapi('AnalyticsException', { description: 'One exception; `reference` has the shape of its `metric`.' });

export const exceptionsResponse = z
  .object({
    total: exceptionsResult.shape.total,
    filters: z.object({ catalogItemId: z.string().max(200).optional() }).strict().openapi('ExceptionFilters', { description: 'The filters applied, as sent.' }),
    exceptions: z.array(exceptionSchema).max(maxAnalyticsCaps.exceptions),
    ...common,
  })
  .strict()
  .openapi('ExceptionsReport');

export const comparisonResponse = z
  .object({
    metric: z.literal('CLINIC_ORDER_COUNTS'),
    ...definitionFields,
    unit: z.literal('orders'),
    filters: z.object({}).strict().openapi('ComparisonFilters', { description: 'No filters today; kept for additive ones.' }),
    clinics: z.array(comparisonClinic).max(maxAnalyticsCaps.comparison),
    ...common,
  })
  .strict()
  .openapi('ClinicComparison', { description: 'Order counts per clinic, ordered by clinicId. Counts only: order value is never included.' });

export const trendResponse = z
  .object({
    metric: z.literal('CONSUMPTION_TREND'),
    ...definitionFields,
    granularity: trendResult.shape.granularity,
    window: windowSchema,
    series: z.array(trendSeries).max(maxAnalyticsCaps.trend),
    ...common,
  })
  .strict()
  .openapi('ConsumptionTrend', {
    description:
      'Consumption per supply in its own unit, one series per (catalog item, unit of measure), ordered by catalogItemId. Points are days or ISO weeks (Monday to Sunday) clipped to the window; periods without consumption are omitted.',
  });

export const backlogResponse = z
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

export const cycleTimeResponse = z
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

export const briefingResponse = z
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
            unit: figureUnit,
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
