import { z } from 'zod';
import { ConsoleError } from '../consoleError.js';
import { dayMs } from './tenantContext.js';

export const historyScales = ['small', 'medium', 'large'] as const;
export type HistoryScale = (typeof historyScales)[number];

export type HistoryParams = {
  readonly seed: string | number;
  readonly tenants: number;
  readonly days: number;
  readonly scale: HistoryScale;
  /** End of the history: a UTC day start (`2025-11-22T00:00:00.000Z`). */
  readonly asOf: Date | string;
};

export type ResolvedHistoryParams = {
  readonly seed: string;
  readonly tenants: number;
  readonly days: number;
  readonly scale: HistoryScale;
  readonly asOfMs: number;
  readonly startMs: number;
};

export const historyDefaults = { tenants: 2, days: 90, scale: 'small', seed: '1' } as const;

const paramsSchema = z
  .object({
    seed: z.union([z.string().min(1, 'seed must not be empty'), z.number().int('seed must be a whole number')]),
    tenants: z.number().int().min(1, 'tenants must be at least 1').max(100, 'tenants must be at most 100'),
    days: z.number().int().min(1, 'days must be at least 1').max(3650, 'days must be at most 3650'),
    scale: z.enum(historyScales, { errorMap: () => ({ message: 'scale must be small, medium or large' }) }),
    asOf: z.union([z.date(), z.string()]),
  })
  .strict();

/** Checks the parameters of a history; a bad one is a ConsoleError naming it. */
export function resolveHistoryParams(params: HistoryParams): ResolvedHistoryParams {
  const parsed = paramsSchema.safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConsoleError(`invalid history parameter ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  const { seed, tenants, days, scale, asOf } = parsed.data;
  const asOfMs = new Date(asOf).getTime();
  if (!Number.isFinite(asOfMs) || asOfMs % dayMs !== 0) {
    throw new ConsoleError(`invalid history parameter asOf: ${String(asOf)} is not the start of a UTC day`);
  }
  return { seed: String(seed), tenants, days, scale, asOfMs, startMs: asOfMs - days * dayMs };
}

/** The start of the UTC day of `now`: the default end of a history. */
export function startOfUtcDay(now: Date): Date {
  return new Date(Math.floor(now.getTime() / dayMs) * dayMs);
}

/** Events one tenant should produce: `small` is per tenant, `medium` and `large` are shared totals. */
export function tenantEventBudget(scale: HistoryScale, tenants: number): number {
  switch (scale) {
    case 'small':
      return 4_000;
    case 'medium':
      return Math.round(100_000 / tenants);
    case 'large':
      return Math.round(1_000_000 / tenants);
  }
}

/** About how many events a history of these parameters holds (for progress reporting). */
export function estimateEventCount(params: HistoryParams): number {
  const { scale, tenants } = resolveHistoryParams(params);
  return tenantEventBudget(scale, tenants) * tenants;
}
