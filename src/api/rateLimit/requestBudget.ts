import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '../../platform/logger.js';
import { quitRedis, watchRedisOutages } from '../../platform/redisConnection.js';

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
  /** 'redis' or 'memory' — which store backs it (redis even while temporarily on the insurance limiter). */
  readonly store: 'redis' | 'memory';
  consume(budgetKey: string): Promise<BudgetDecision>;
  /** Gives back one unit consumed for a request that was then refused (401). */
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

// Short so that a request never waits long on a dead or unreachable Redis.
const connectTimeoutMs = 1000;
const commandTimeoutMs = 1000;
const maxReconnectDelayMs = 2000;

/** Per-key budget of pointsPerWindow requests per windowSeconds, in Redis (shared) or in memory (per process). */
export function createRequestBudget(options: RequestBudgetOptions): RequestBudget {
  const { pointsPerWindow, windowSeconds, redisUrl, logger } = options;
  if (!Number.isInteger(pointsPerWindow) || pointsPerWindow < 1) {
    throw new RangeError(`pointsPerWindow must be an integer >= 1, got ${pointsPerWindow}`);
  }
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1) {
    throw new RangeError(`windowSeconds must be an integer >= 1, got ${windowSeconds}`);
  }
  const memory = (): RateLimiterMemory => new RateLimiterMemory({ points: pointsPerWindow, duration: windowSeconds });

  if (redisUrl === undefined || redisUrl === '') {
    const limiter = memory();
    return {
      store: 'memory',
      consume: (budgetKey) => consumeOne(limiter, budgetKey, pointsPerWindow),
      refund: (budgetKey) => refundOne(limiter, budgetKey),
      close: async () => {},
    };
  }

  const connection = connectRedis(redisUrl, logger);
  const limiter = new RateLimiterRedis({
    storeClient: connection.client,
    points: pointsPerWindow,
    duration: windowSeconds,
    keyPrefix: options.keyPrefix ?? defaultBudgetKeyPrefix,
    // Not 'ready' means straight to the insurance limiter, without touching the socket.
    rejectIfRedisNotReady: true,
    insuranceLimiter: memory(),
  });
  return {
    store: 'redis',
    consume: async (budgetKey) => {
      await connection.firstAttempt;
      return consumeOne(limiter, budgetKey, pointsPerWindow);
    },
    refund: (budgetKey) => refundOne(limiter, budgetKey),
    close: () => connection.close(),
  };
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

async function consumeOne(limiter: RateLimiterAbstract, budgetKey: string, limit: number): Promise<BudgetDecision> {
  try {
    const res = await limiter.consume(budgetKey, 1);
    return toDecision(true, res, limit);
  } catch (rejection: unknown) {
    // rate-limiter-flexible rejects with a RateLimiterRes when over budget, with an Error when the store failed.
    if (rejection instanceof RateLimiterRes) {
      return toDecision(false, rejection, limit);
    }
    throw rejection;
  }
}

async function refundOne(limiter: RateLimiterAbstract, budgetKey: string): Promise<void> {
  // A unit that cannot be given back while the store is unreachable is lost: the request is refused
  // either way, and the window ends within a minute.
  await limiter.reward(budgetKey, 1).catch(() => undefined);
}

function toDecision(allowed: boolean, res: RateLimiterRes, limit: number): BudgetDecision {
  const remaining = Math.max(0, res.remainingPoints);
  const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return allowed ? { allowed, limit, remaining, resetSeconds } : { allowed, limit, remaining, resetSeconds, retryAfterSeconds: resetSeconds };
}

type RedisConnection = {
  readonly client: Redis;
  /** Settles once the first connection attempt succeeded or failed, so start-up requests are not counted per process needlessly. */
  readonly firstAttempt: Promise<void>;
  close(): Promise<void>;
};

function connectRedis(redisUrl: string, logger: Logger): RedisConnection {
  const client = new Redis(redisUrl, {
    enableOfflineQueue: false,
    connectTimeout: connectTimeoutMs,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    // Keeps reconnecting in the background so the shared budget comes back with Redis.
    retryStrategy: (times) => Math.min(times * 100, maxReconnectDelayMs),
  });

  let settleFirstAttempt = (): void => {};
  const firstAttempt = new Promise<void>((resolve) => {
    settleFirstAttempt = resolve;
  });
  // Backstop in case neither 'ready' nor 'error' arrives in time.
  const firstAttemptTimer = setTimeout(() => settleFirstAttempt(), connectTimeoutMs + 250);
  firstAttemptTimer.unref();
  const outages = watchRedisOutages(client, {
    down: (err) => {
      settleFirstAttempt();
      logger.warn(
        { store: 'redis', err },
        'rate limit store unreachable: Redis is down, request budgets are counted per process until it is back',
      );
    },
    up: (afterOutage) => {
      settleFirstAttempt();
      if (afterOutage) logger.info({ store: 'redis' }, 'rate limit store reachable again: request budgets are shared through Redis');
    },
  });

  return {
    client,
    firstAttempt,
    close: async () => {
      outages.stop();
      clearTimeout(firstAttemptTimer);
      settleFirstAttempt();
      await quitRedis(client);
    },
  };
}
