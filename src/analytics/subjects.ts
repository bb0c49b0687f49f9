import { z } from 'zod';
import {
  briefingPeriods,
  briefingWindow,
  dayAlignedWindow,
  metricKeys,
  stateMetrics,
  trendGranularities,
  type BriefingPeriod,
  type DayWindow,
  type MetricKey,
  type TrendGranularity,
} from './definitions.js';
import type { AnalyticsComputer, MetricResult } from './results.js';
import type { AnalyticsCaps } from '../config/analyticsCaps.js';

/**
 * What an analytics read computed, with every parameter that decides the figure (windows, filters
 * and the caps in force). A subject is stored in its evidence record, and verification recomputes
 * the same subject from the event log.
 */
const dayWindow = z.object({ from: z.string(), to: z.string() }).strict();
const partialCaps = z
  .object({ counts: z.number().int(), backlog: z.number().int(), trend: z.number().int() })
  .partial()
  .strict();

export const metricSubject = z.object({ kind: z.literal('metric'), metric: z.enum(metricKeys), window: dayWindow.optional(), caps: partialCaps }).strict();
export const subjectSchema = z.discriminatedUnion('kind', [
  metricSubject,
  z.object({ kind: z.literal('exceptions'), catalogItemId: z.string().optional(), cap: z.number().int() }).strict(),
  z.object({ kind: z.literal('comparison'), cap: z.number().int() }).strict(),
  z.object({ kind: z.literal('trend'), window: dayWindow, granularity: z.enum(trendGranularities), cap: z.number().int() }).strict(),
  z
    .object({ kind: z.literal('briefing'), period: z.enum(briefingPeriods), window: dayWindow, caps: partialCaps })
    .strict(),
]);
export type Subject = z.infer<typeof subjectSchema>;
export type MetricSubject = z.infer<typeof metricSubject>;

/** The caps a metric's figure depends on (the others are left out of its evidence). */
function capsOf(metric: MetricKey, caps: AnalyticsCaps): MetricSubject['caps'] {
  switch (metric) {
    case 'LOW_STOCK':
    case 'EXPIRING_STOCK':
    case 'DELIVERY_EXCEPTIONS':
    case 'RECEIPT_DISCREPANCIES':
      return { counts: caps.counts };
    case 'APPROVAL_BACKLOG':
      return { backlog: caps.backlog };
    case 'CONSUMPTION_TREND':
      return { trend: caps.trend };
    case 'PENDING_ORDERS':
    case 'ORDER_CYCLE_TIME':
      return {};
  }
}

/** A metric's subject: state metrics never carry a window (one given is ignored), window metrics always do. */
export function subjectOfMetric(metric: MetricKey, window: DayWindow | undefined, caps: AnalyticsCaps): MetricSubject {
  if (stateMetrics.includes(metric)) return { kind: 'metric', metric, caps: capsOf(metric, caps) };
  if (window === undefined) throw new Error(`${metric} is computed over a window`);
  return { kind: 'metric', metric, window: dayAlignedWindow(window), caps: capsOf(metric, caps) };
}

export type TrendSubject = Extract<Subject, { kind: 'trend' }>;

export function trendSubject(window: DayWindow, granularity: TrendGranularity, cap: number): TrendSubject {
  return { kind: 'trend', window: dayAlignedWindow(window), granularity, cap };
}

/**
 * The subject as an evidence id digests it: windows as their day-aligned bounds (the request's
 * instant and the form its dates were written in never enter an id).
 */
export function subjectForDigest(subject: Subject): Subject {
  switch (subject.kind) {
    case 'metric':
      return subject.window === undefined ? subject : { ...subject, window: dayAlignedWindow(subject.window) };
    case 'trend':
    case 'briefing':
      return { ...subject, window: dayAlignedWindow(subject.window) };
    case 'exceptions':
    case 'comparison':
      return subject;
  }
}

/** The metrics of a briefing, in briefing order, for a period ending with asOf's day. */
export function briefingMetricSubjects(period: BriefingPeriod, asOf: string, caps: AnalyticsCaps): MetricSubject[] {
  const window = briefingWindow(asOf, period);
  return metricKeys.map((metric) => subjectOfMetric(metric, window, caps));
}

export function briefingSubject(period: BriefingPeriod, asOf: string, caps: AnalyticsCaps): Subject {
  return { kind: 'briefing', period, window: dayAlignedWindow(briefingWindow(asOf, period)), caps: { counts: caps.counts, backlog: caps.backlog, trend: caps.trend } };
}

/** Caps recorded in a subject; those it does not depend on are irrelevant to it (zero). */
function recordedCaps(caps: Partial<AnalyticsCaps>): AnalyticsCaps {
  return { counts: caps.counts ?? 0, backlog: caps.backlog ?? 0, trend: caps.trend ?? 0, exceptions: 0, comparison: 0 };
}

export type BriefingResult = { readonly metrics: readonly MetricResult[] };

/**
 * Computes a subject with any computer: the projection's reader for /v1, the fold over the event
 * log for verification. The result is what evidence records as the figure.
 */
export async function computeSubject(computer: AnalyticsComputer, subject: Subject, asOf: string): Promise<unknown> {
  switch (subject.kind) {
    case 'metric':
      return computer.metric(subject.metric, { ...(subject.window ? { window: subject.window } : {}), caps: recordedCaps(subject.caps) }, asOf);
    case 'exceptions':
      return computer.exceptions({ ...(subject.catalogItemId === undefined ? {} : { catalogItemId: subject.catalogItemId }), cap: subject.cap }, asOf);
    case 'comparison':
      return computer.comparison({ cap: subject.cap });
    case 'trend':
      return computer.trend({ window: subject.window, granularity: subject.granularity, cap: subject.cap });
    case 'briefing': {
      // Each metric exactly as its own subject computes it, so that the figures are those of the
      // metrics' own evidence (and a snapshot computes each once).
      const caps = recordedCaps(subject.caps);
      const metrics: MetricResult[] = [];
      for (const metric of metricKeys) {
        metrics.push((await computeSubject(computer, subjectOfMetric(metric, subject.window, caps), asOf)) as MetricResult);
      }
      return { metrics } satisfies BriefingResult;
    }
  }
}
