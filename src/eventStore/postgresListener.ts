import { createPrimaryClient } from '../platform/primaryLocator.js';
import type pg from 'pg';
import type { Logger } from '../platform/logger.js';
import { sql } from '../platform/sql.js';

export type PostgresListener = {
  /** Listens while at least one holder retains it. */
  retain(): void;
  release(): void;
  close(): Promise<void>;
};

/**
 * One LISTEN connection per store, shared by its subscriptions, outside the pool (a pooled
 * connection would be reset and reused). A lost connection is logged and reopened after a pause;
 * subscribers keep their fallback poll meanwhile, and are woken once it listens again in case a
 * notification was missed.
 */
export function createPostgresListener(options: {
  readonly connectionUri: string;
  readonly channel: string;
  readonly logger: Logger;
  readonly onNotification: () => void;
  readonly reconnectDelayMs?: number;
}): PostgresListener {
  const { connectionUri, channel, logger, onNotification } = options;
  const reconnectDelayMs = options.reconnectDelayMs ?? 1000;
  const listenStatement = sql.fragment`LISTEN ${sql.identifier([channel])}`.sql;
  let holders = 0;
  let closed = false;
  let client: pg.Client | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const drop = (stale: pg.Client) => {
    if (client !== stale) return;
    client = undefined;
    stale.removeAllListeners('notification');
    stale.end().catch(() => {});
  };

  const scheduleReconnect = () => {
    if (closed || holders === 0 || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect();
    }, reconnectDelayMs);
    reconnectTimer.unref();
  };

  const connect = () => {
    if (closed || holders === 0 || client) return;
    const next = createPrimaryClient(connectionUri);
    client = next;
    next.on('notification', () => onNotification());
    next.on('error', (error) => {
      if (client !== next) return;
      logger.warn({ err: error }, 'event notifications lost; polling until the listener reconnects');
      drop(next);
      scheduleReconnect();
    });
    next
      .connect()
      .then(() => next.query(listenStatement))
      .then(() => {
        if (client === next) onNotification();
      })
      .catch((error: unknown) => {
        if (client !== next) return;
        logger.warn({ err: error }, 'could not listen for event notifications; polling meanwhile');
        drop(next);
        scheduleReconnect();
      });
  };

  return {
    retain() {
      holders += 1;
      connect();
    },
    release() {
      holders = Math.max(0, holders - 1);
      if (holders === 0 && client) drop(client);
    },
    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners('notification');
        await current.end().catch(() => {});
      }
    },
  };
}
