import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPgDriverFactory } from '@slonik/pg-driver';
import type { DriverClient, DriverFactory } from 'slonik';

/** A query that ran past the client-side limit; its connection is destroyed. */
export class QueryTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`query did not answer within ${timeoutMs} ms`);
    this.name = 'QueryTimeoutError';
  }
}

export type ResilientDriverOptions = {
  /**
   * Client-side bound on one statement. Postgres's own statement_timeout cannot act while the
   * server is unreachable; this one can. Undefined: no bound (migrations, replays).
   */
  readonly queryTimeoutMs?: number;
  /** Longest a destroy may take before the connection counts as gone anyway. */
  readonly destroyTimeoutMs: number;
};

/**
 * slonik's pg driver, with the pool slot of a dead connection always given back.
 *
 * In @slonik/driver 47, a connection that fails during a query (Postgres restarted, network cut)
 * is destroyed by waiting on that query; the query's rejection aborts the destroy before it emits
 * `destroy`, so the pool keeps the dead client forever (PENDING_DESTROY). Each outage under load
 * loses up to one slot per running query, and once every slot is lost every request waits in the
 * pool's queue for good, and `pool.end()` with it (@slonik/driver 49 races the destroy the same
 * way). This wrapper announces `destroy` to the pool whatever the inner destroy does, bounds the
 * destroy, and bounds each query on the client side.
 */
export function createResilientPgDriverFactory(options: ResilientDriverOptions): DriverFactory {
  const inner = createPgDriverFactory();
  return async (input) => {
    const driver = await inner(input);
    return { createClient: async () => resilientClient(await driver.createClient(), options) };
  };
}

function resilientClient(inner: DriverClient, options: ResilientDriverOptions): DriverClient {
  // The pool listens here; inner events are passed on, and `destroy` is announced exactly once.
  const events = new EventEmitter();
  let gone = false;
  const announceGone = (): void => {
    if (gone) return;
    gone = true;
    events.emit('destroy');
  };
  inner.on('destroy', announceGone);
  inner.on('acquire', () => events.emit('acquire'));
  inner.on('release', () => events.emit('release'));
  inner.on('notice', (notice) => events.emit('notice', notice));

  let destroying: Promise<void> | undefined;
  const destroy = (): Promise<void> => {
    destroying ??= Promise.race([inner.destroy().catch(() => undefined), sleep(options.destroyTimeoutMs)]).then(announceGone);
    return destroying;
  };
  inner.on('error', (error) => {
    // The inner driver destroys the client on a connection error by itself; this makes sure the pool hears of it.
    void destroy();
    if (events.listenerCount('error') > 0) events.emit('error', error);
  });

  const query: DriverClient['query'] = async (text, values) => {
    const limit = options.queryTimeoutMs;
    if (limit === undefined) return inner.query(text, values);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        void destroy();
        reject(new QueryTimeoutError(limit));
      }, limit);
    });
    try {
      return await Promise.race([inner.query(text, values), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    acquire: () => inner.acquire(),
    destroy,
    id: () => inner.id(),
    on: events.on.bind(events),
    off: events.off.bind(events),
    removeListener: events.removeListener.bind(events),
    query,
    // A release that fails (its reset statement did) leaves the inner client neither idle nor gone.
    release: () =>
      inner.release().catch(async (error: unknown) => {
        await destroy();
        throw error;
      }),
    state: () => (gone ? 'DESTROYED' : inner.state()),
    stream: (text, values) => inner.stream(text, values),
  };
}
