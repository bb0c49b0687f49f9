import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '../../platform/logger.js';

export type BudgetDecision = {
  readonly allowed: boolean;
  /** Budget per window (>= 1). */
  readonly limit: number;
  /** Requests left after this one, >= 0 (0 when exhausted). */
  readonly remaining: number;
  /** Whole seconds until the window resets, >= 1. */
  readonly resetSeconds: number;
  /** Only when !allowed: whole seconds >= 1 until a request is allowed again. */
  readonly retryAfterSeconds?: number;
};

export type RequestBudget = {
  /** 'redis' or 'memory' — which store backs it (redis even while Redis is away and this process counts alone). */
  readonly store: 'redis' | 'memory';
  /** Spends `cost` units (1 by default); refused, and spent all the same, when fewer are left. */
  consume(budgetKey: string, cost?: number): Promise<BudgetDecision>;
  /** Gives back one unit consumed for a request that was then refused (401), or that is served again on the primary after failing on a standby. */
  refund(budgetKey: string): Promise<void>;
  /** Quits the ioredis client if any. */
  close(): Promise<void>;
};

export type RequestBudgetOptions = {
  readonly pointsPerWindow: number;
  /** 60 in production. */
  readonly windowSeconds: number;
  readonly redisUrl?: string;
  readonly logger: Logger;
  /** Redis key prefix, default 'supply-api:budget'. */
  readonly keyPrefix?: string;
};

export const defaultBudgetKeyPrefix = 'supply-api:budget';

/** Per-key budget of pointsPerWindow requests per windowSeconds, in Redis (shared) or in memory (per process). */
export async function createRequestBudget(options: RequestBudgetOptions): Promise<RequestBudget> {
  const { pointsPerWindow, windowSeconds, redisUrl } = options;
  if (!Number.isInteger(pointsPerWindow) || pointsPerWindow < 1) {
    throw new RangeError(`pointsPerWindow must be an integer >= 1, got ${pointsPerWindow}`);
  }
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1) {
    throw new RangeError(`windowSeconds must be an integer >= 1, got ${windowSeconds}`);
  }
  if (redisUrl === undefined || redisUrl === '') {
    const limiter = new RateLimiterMemory({ points: pointsPerWindow, duration: windowSeconds });
    return {
      store: 'memory',
      consume: (budgetKey, cost) => consumeOne(limiter, budgetKey, pointsPerWindow, cost),
      refund: (budgetKey) => refundOne(limiter, budgetKey),
      close: async () => {},
    };
  }

  // ioredis (about 12 MB of a process's memory) is loaded only by a process that uses Redis.
  const { createRedisRequestBudget } = await import('./redisRequestBudget.js');
  return createRedisRequestBudget({ ...options, redisUrl });
}

/** One limit of a family: `points` per `windowSeconds` per key, counted under `keyPrefix`. */
export type LimitSpec = { readonly points: number; readonly windowSeconds: number; readonly keyPrefix: string };
export type Limit = Pick<RequestBudget, 'consume' | 'refund'>;

/**
 * Several limits on one store: in Redis over one connection, shared by every process (each limit
 * counting per process while Redis cannot be reached), or in this process's memory.
 */
export type Limits = {
  readonly store: 'redis' | 'memory';
  limit(spec: LimitSpec): Limit;
  close(): Promise<void>;
};

export async function createLimits(options: { readonly redisUrl?: string; readonly logger: Logger }): Promise<Limits> {
  if (options.redisUrl === undefined || options.redisUrl === '') {
    return {
      store: 'memory',
      limit: (spec) => {
        const limiter = new RateLimiterMemory({ points: spec.points, duration: spec.windowSeconds });
        return { consume: (key, cost) => consumeOne(limiter, key, spec.points, cost), refund: (key) => refundOne(limiter, key) };
      },
      close: async () => {},
    };
  }
  const { createRedisLimits } = await import('./redisRequestBudget.js');
  return createRedisLimits(options.redisUrl, options.logger);
}

/** The response headers announcing a decision (Retry-After only on refusal). */
export function budgetHeaders(decision: BudgetDecision, windowSeconds: number): Record<string, string> {
  const { limit, remaining, resetSeconds } = decision;
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(resetSeconds),
    RateLimit: `limit=${limit}, remaining=${remaining}, reset=${resetSeconds}`,
    'RateLimit-Policy': `${limit};w=${windowSeconds}`,
  };
  if (!decision.allowed) {
    headers['Retry-After'] = String(decision.retryAfterSeconds ?? resetSeconds);
  }
  return headers;
}

export async function consumeOne(limiter: RateLimiterAbstract, budgetKey: string, limit: number, cost = 1): Promise<BudgetDecision> {
  const { allowed, res } = await attemptConsume(limiter, budgetKey, cost);
  return toDecision(allowed, res, limit);
}

/** The store's answer to spending `cost` units: allowed or not, with its count. */
export type Counted = { readonly allowed: boolean; readonly res: RateLimiterRes };

/** Spends `cost` units; rejects only when the store failed. */
export async function attemptConsume(limiter: RateLimiterAbstract, budgetKey: string, cost: number): Promise<Counted> {
  try {
    return { allowed: true, res: await limiter.consume(budgetKey, cost) };
  } catch (rejection: unknown) {
    // rate-limiter-flexible rejects with a RateLimiterRes when over budget, with an Error when the store failed.
    if (rejection instanceof RateLimiterRes) return { allowed: false, res: rejection };
    throw rejection;
  }
}

export async function refundOne(limiter: RateLimiterAbstract, budgetKey: string): Promise<void> {
  // A unit that cannot be given back while the store is unreachable is lost: the request is refused
  // either way, and the window ends within a minute.
  await limiter.reward(budgetKey, 1).catch(() => undefined);
}

export function toDecision(allowed: boolean, res: RateLimiterRes, limit: number): BudgetDecision {
  const remaining = Math.max(0, res.remainingPoints);
  const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return allowed ? { allowed, limit, remaining, resetSeconds } : { allowed, limit, remaining, resetSeconds, retryAfterSeconds: resetSeconds };
}
