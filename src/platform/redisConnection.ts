import { Redis, type RedisOptions } from 'ioredis';
import { parseRedisUrl } from '../config/redisUrl.js';

/**
 * Reconnecting to a Sentinel-named master asks a Sentinel where the master is: after a failover
 * the next attempt finds the promoted replica, so attempts are kept close together.
 */
const sentinelMaxReconnectDelayMs = 500;

/**
 * An ioredis client for REDIS_URL (checked at start by parseRedisUrl): one server as written, or
 * the master the Sentinels name. ioredis then follows a failover itself: it asks the Sentinels
 * for the master on every (re)connection, checks the role of what it reached, and (the failover
 * detector) drops the connection when a Sentinel announces +switch-master, so that a demoted
 * master still alive is left at once.
 */
export function createRedisClient(redisUrl: string, options: RedisOptions): Redis {
  const target = parseRedisUrl(redisUrl);
  if (target.mode === 'standalone') return new Redis(target.url, options);
  const retry = options.retryStrategy;
  const client = new Redis({
    ...options,
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.masterName,
    role: 'master',
    db: target.db,
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.sentinelUsername === undefined ? {} : { sentinelUsername: target.sentinelUsername }),
    ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
    failoverDetector: true,
    // A write refused by a master demoted under this connection: reconnect through the Sentinels.
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 1 : false),
    retryStrategy:
      retry === null
        ? null
        : (times) => {
            const delay = typeof retry === 'function' ? retry(times) : times * 100;
            return typeof delay === 'number' ? Math.min(delay, sentinelMaxReconnectDelayMs) : delay;
          },
  });
  return retry === null ? client : reconnectAfterUnaskedEnd(client);
}

/**
 * ioredis (5.x) ends a Sentinel client for good (status `end`, no more reconnects) when its
 * failover detector closes the connector while a connection attempt is still asking the Sentinels
 * for the master: the attempt fails with "Connection is closed." and nothing tries again. That
 * happens when a +switch-master arrives while the attempt is slow, as it is when the process's
 * event loop is busy during the failover (connections to the Sentinels time out, "All sentinels are
 * unreachable"); the request budgets then stayed per process for good. An end nobody asked for
 * (no `disconnect()`, no QUIT) is followed here by a new connection after the usual pause; the
 * client's duplicates (BullMQ's blocking connection) get the same.
 */
function reconnectAfterUnaskedEnd(client: Redis): Redis {
  let asked = false;
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    if (!reconnect) asked = true;
    disconnect(reconnect);
  };
  const quit = client.quit.bind(client) as (...args: unknown[]) => Promise<'OK'>;
  client.quit = ((...args: unknown[]) => {
    asked = true;
    return quit(...args);
  }) as Redis['quit'];
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (...args: Parameters<Redis['duplicate']>) => reconnectAfterUnaskedEnd(duplicate(...args));
  client.on('end', () => {
    if (asked) return;
    setTimeout(() => {
      if (!asked && client.status === 'end') client.connect().catch(() => undefined);
    }, sentinelMaxReconnectDelayMs).unref();
  });
  return client;
}

/** Whether REDIS_URL names Sentinels (a master that may move) rather than one server. */
export function isSentinelUrl(redisUrl: string): boolean {
  return parseRedisUrl(redisUrl).mode === 'sentinel';
}

export type RedisOutageHandlers = {
  /** The connection went down, or its first attempt failed: once per outage, however many reconnects fail. */
  down(err: Error | undefined): void;
  /** The connection is ready; `afterOutage` when it had been down. */
  up(afterOutage: boolean): void;
};

/**
 * Folds a Redis client's connection events into one `down` per outage and one `up` per recovery.
 * Its 'error' listener is also what keeps ioredis from printing every failed reconnect. After
 * `stop` (shutdown, when errors are expected) nothing more is reported.
 */
export function watchRedisOutages(client: Redis, handlers: RedisOutageHandlers): { stop(): void } {
  let state: 'starting' | 'up' | 'down' = 'starting';
  let stopped = false;
  let lastError: Error | undefined;
  const wentDown = (err: Error | undefined): void => {
    if (stopped || state === 'down') return;
    state = 'down';
    handlers.down(err);
  };
  client.on('error', (err: Error) => {
    lastError = err;
    // While connected an error either is harmless or is followed by 'close'.
    if (client.status !== 'ready') wentDown(err);
  });
  client.on('close', () => wentDown(lastError));
  client.on('ready', () => {
    lastError = undefined;
    const afterOutage = state === 'down';
    state = 'up';
    if (!stopped) handlers.up(afterOutage);
  });
  return {
    stop: () => {
      stopped = true;
    },
  };
}

/** Closes a client: politely (QUIT) when connected, at once otherwise or when QUIT fails. */
export async function quitRedis(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
    } catch {
      // A hard disconnect follows in any case.
    }
  }
  // Also after QUIT: only disconnect closes the Sentinel connections of ioredis's failover
  // detector, which would otherwise reconnect for ever and keep the process alive.
  client.disconnect();
}
