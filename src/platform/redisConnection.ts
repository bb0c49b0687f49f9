import type { Redis } from 'ioredis';

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
      return;
    } catch {
      // Fall through to a hard disconnect.
    }
  }
  client.disconnect();
}
