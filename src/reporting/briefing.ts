import type { CommonQueryMethods } from 'slonik';
import { computeWithEvidence, resultAt } from './analyticsReads.js';
import { briefingWindow, multiRowMetrics, type BriefingPeriod, type DayWindow } from '../analytics/definitions.js';
import { dimensionLabel, metricLabel, type LabelLanguage } from '../analytics/labels.js';
import type { MetricResult } from '../analytics/results.js';
import type { AnalyticsCaps } from '../config/analyticsCaps.js';
import { briefingMetricSubjects, briefingSubject, type BriefingResult } from '../analytics/subjects.js';

/** One figure of the management briefing, as the briefing operation and the CSV export give it. */
export type BriefingFigure = {
  readonly metric: MetricResult['metric'];
  readonly dimension?: string;
  readonly label: string;
  readonly value: number | null;
  readonly unit: string;
  /** Evidence of the source metric: the id that metric's own operation gives. */
  readonly evidenceId: string;
};

export type Briefing = {
  readonly period: BriefingPeriod;
  readonly asOf: string;
  readonly window: DayWindow;
  readonly evidenceId: string;
  readonly truncated: boolean;
  readonly figures: readonly BriefingFigure[];
};

/**
 * The briefing of a period at `asOf`: every metric in one snapshot, one figure per metric, or per
 * row of a multi-row metric (with `dimension`), labelled in `language`.
 */
export async function composeBriefing(
  db: CommonQueryMethods,
  tenantId: string,
  request: {
    readonly period: BriefingPeriod;
    readonly asOf: string;
    readonly caps: AnalyticsCaps;
    readonly language: LabelLanguage;
    /** Where the evidence is stored (the primary when `db` is a hot standby); `db` by default. */
    readonly storeTo?: CommonQueryMethods;
  },
): Promise<Briefing> {
  const { period, asOf, caps, language } = request;
  const subjects = briefingMetricSubjects(period, asOf, caps);
  const { computed } = await computeWithEvidence(db, tenantId, asOf, [briefingSubject(period, asOf, caps), ...subjects], request.storeTo ?? db);
  const { result, evidenceId } = resultAt<BriefingResult>(computed, 0);
  const figures = result.metrics.flatMap((metric, index): BriefingFigure[] => {
    const source = resultAt<MetricResult>(computed, index + 1).evidenceId;
    if (!multiRowMetrics.includes(metric.metric)) {
      return [{ metric: metric.metric, label: metricLabel(metric.metric, language), value: metric.value, unit: metric.unit, evidenceId: source }];
    }
    return metric.breakdown.map((row) => ({
      metric: metric.metric,
      dimension: row.dimension,
      label: dimensionLabel(metric.metric, row.dimension, language, row.name),
      value: row.value,
      unit: row.unit,
      evidenceId: source,
    }));
  });
  return { period, asOf, window: briefingWindow(asOf, period), evidenceId, truncated: result.metrics.some((m) => m.truncated), figures };
}
