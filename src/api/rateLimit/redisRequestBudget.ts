import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { redactedRedisUrl } from '../../config/redisUrl.js';
import type { Logger } from '../../platform/logger.js';
import { createRedisClient, quitRedis, watchRedisOutages } from '../../platform/redisConnection.js';
import { createBudgetLedger } from './budgetLedger.js';
import { attemptConsume, defaultBudgetKeyPrefix, toDecision, type Counted, type Limit, type Limits, type LimitSpec, type RequestBudget, type RequestBudgetOptions } from './requestBudget.js';

// Short so that a request never waits long on a dead or unreachable Redis.
const connectTimeoutMs = 1000;
const commandTimeoutMs = 1000;
const maxReconnectDelayMs = 2000;

/**
 * The request budget shared through Redis (createRequestBudget with a Redis URL), counted in this
 * process while Redis cannot be reached (see BudgetLedger).
 */
export function createRedisRequestBudget(options: RequestBudgetOptions & { readonly redisUrl: string }): RequestBudget {
  const connection = connectRedis(options.redisUrl, options.logger);
  const budget = redisLimit(connection, { points: options.pointsPerWindow, windowSeconds: options.windowSeconds, keyPrefix: options.keyPrefix ?? defaultBudgetKeyPrefix });
  return { store: 'redis', ...budget, close: () => connection.close() };
}

/** Limits in Redis over one connection (createLimits with a Redis URL). */
export function createRedisLimits(redisUrl: string, logger: Logger): Limits {
  const connection = connectRedis(redisUrl, logger);
  return {
    store: 'redis',
    limit: (spec) => redisLimit(connection, spec),
    close: () => connection.close(),
  };
}

function redisLimit(connection: RedisConnection, spec: LimitSpec): Limit {
  const shared = new RateLimiterRedis({
    storeClient: connection.client,
    points: spec.points,
    duration: spec.windowSeconds,
    keyPrefix: spec.keyPrefix,
    // Not 'ready' (a failover, an outage) means counting here at once, without touching the socket.
    rejectIfRedisNotReady: true,
  });
  const ledger = createBudgetLedger({ points: spec.points, windowSeconds: spec.windowSeconds });
  return {
    consume: async (key, cost = 1) => {
      await connection.firstAttempt;
      const owed = ledger.takeOwed(key);
      let counted: Counted;
      try {
        counted = await attemptConsume(shared, key, cost + owed);
      } catch {
        // The store failed: what this process granted stays owed, and this request is counted here.
        ledger.repay(key, owed);
        return ledger.consume(key, cost);
      }
      ledger.observed(key, counted.res.consumedPoints, counted.res.msBeforeNext);
      return toDecision(counted.allowed, counted.res, spec.points);
    },
    refund: async (key) => {
      try {
        await shared.reward(key, 1);
      } catch {
        ledger.refund(key);
      }
    },
  };
}

type RedisConnection = {
  readonly client: Redis;
  /** Settles once the first connection attempt succeeded or failed, so start-up requests are not counted per process needlessly. */
  readonly firstAttempt: Promise<void>;
  close(): Promise<void>;
};

function connectRedis(redisUrl: string, logger: Logger): RedisConnection {
  const client = createRedisClient(redisUrl, {
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
        `rate limit store unreachable at REDIS_URL=${redactedRedisUrl(redisUrl)}: request budgets are counted per process until it is back`,
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
