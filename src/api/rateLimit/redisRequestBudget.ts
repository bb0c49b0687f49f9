import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { redactedUrl } from '../../platform/startupErrors.js';
import type { Logger } from '../../platform/logger.js';
import { quitRedis, watchRedisOutages } from '../../platform/redisConnection.js';
import { consumeOne, defaultBudgetKeyPrefix, refundOne, type Limit, type Limits, type LimitSpec, type RequestBudget, type RequestBudgetOptions } from './requestBudget.js';

// Short so that a request never waits long on a dead or unreachable Redis.
const connectTimeoutMs = 1000;
const commandTimeoutMs = 1000;
const maxReconnectDelayMs = 2000;

/**
 * The request budget shared through Redis (createRequestBudget with a Redis URL), with `insurance`
 * counting per process while Redis cannot be reached.
 */
export function createRedisRequestBudget(options: RequestBudgetOptions & { readonly redisUrl: string }, insurance: RateLimiterMemory): RequestBudget {
  const connection = connectRedis(options.redisUrl, options.logger);
  const budget = redisLimit(connection, { points: options.pointsPerWindow, windowSeconds: options.windowSeconds, keyPrefix: options.keyPrefix ?? defaultBudgetKeyPrefix }, insurance);
  return { store: 'redis', ...budget, close: () => connection.close() };
}

/** Limits in Redis over one connection (createLimits with a Redis URL). */
export function createRedisLimits(redisUrl: string, logger: Logger): Limits {
  const connection = connectRedis(redisUrl, logger);
  return {
    store: 'redis',
    limit: (spec) => redisLimit(connection, spec, new RateLimiterMemory({ points: spec.points, duration: spec.windowSeconds })),
    close: () => connection.close(),
  };
}

function redisLimit(connection: RedisConnection, spec: LimitSpec, insurance: RateLimiterMemory): Limit {
  const limiter = new RateLimiterRedis({
    storeClient: connection.client,
    points: spec.points,
    duration: spec.windowSeconds,
    keyPrefix: spec.keyPrefix,
    // Not 'ready' means straight to the insurance limiter, without touching the socket.
    rejectIfRedisNotReady: true,
    insuranceLimiter: insurance,
  });
  return {
    consume: async (key, cost) => {
      await connection.firstAttempt;
      return consumeOne(limiter, key, spec.points, cost);
    },
    refund: (key) => refundOne(limiter, key),
  };
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
        { store: 'redis', err, setting: 'REDIS_URL' },
        `rate limit store unreachable at REDIS_URL=${redactedUrl(redisUrl)}: request budgets are counted per process until it is back`,
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
