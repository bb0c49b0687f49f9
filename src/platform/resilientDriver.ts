import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPgDriverFactory } from '@slonik/pg-driver';
import type { Driver, DriverClient, DriverFactory } from 'slonik';
import { isDatabaseUnreachable, type PrimaryLocator } from './primaryLocator.js';

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
  /**
   * The primary of a multi-host DATABASE_URL: each new connection goes to the host it names, and
   * a connection that fails or finds the server read-only or shutting down makes it look again.
   */
  readonly locator?: PrimaryLocator;
};

/** A connection to a server that is no longer the primary (a switchover or failover happened since it opened). */
export class FormerPrimaryError extends Error {
  readonly code = '25006';
  constructor() {
    super('the connection is to a server that is no longer the primary');
    this.name = 'FormerPrimaryError';
  }
}

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
  const { locator } = options;
  if (locator === undefined || !locator.multiHost) {
    return async (input) => {
      const driver = await inner(input);
      return { createClient: async () => resilientClient(await driver.createClient(), options, undefined) };
    };
  }
  // One driver of slonik's per host (each learns its type parsers from its own server), made when
  // the host is first the primary.
  return async (input) => {
    const drivers = new Map<string, Promise<Driver>>();
    const driverFor = (url: string): Promise<Driver> => {
      const known = drivers.get(url);
      if (known !== undefined) return known;
      const target = new URL(input.driverConfiguration.connectionUri);
      const host = new URL(url);
      target.hostname = host.hostname;
      target.port = host.port;
      const made = inner({ driverConfiguration: { ...input.driverConfiguration, connectionUri: target.toString() } });
      drivers.set(url, made);
      made.catch(() => drivers.delete(url));
      return made;
    };
    return {
      createClient: async () => {
        const url = await locator.locate();
        try {
          const driver = await driverFor(url);
          return resilientClient(await driver.createClient(), options, url);
        } catch (error) {
          locator.suspect(url);
          throw error;
        }
      },
    };
  };
}

function resilientClient(inner: DriverClient, options: ResilientDriverOptions, url: string | undefined): DriverClient {
  const { locator } = options;
  const suspectOn = (error: unknown): void => {
    if (locator !== undefined && url !== undefined && isDatabaseUnreachable(error)) locator.suspect(url);
  };
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

  const watched = <T>(running: Promise<T>): Promise<T> =>
    running.catch((error: unknown) => {
      suspectOn(error);
      throw error;
    });

  let destroying: Promise<void> | undefined;
  const destroy = (): Promise<void> => {
    destroying ??= Promise.race([inner.destroy().catch(() => undefined), sleep(options.destroyTimeoutMs)]).then(announceGone);
    return destroying;
  };
  inner.on('error', (error) => {
    suspectOn(error);
    // The inner driver destroys the client on a connection error by itself; this makes sure the pool hears of it.
    void destroy();
    if (events.listenerCount('error') > 0) events.emit('error', error);
  });

  const query: DriverClient['query'] = async (text, values) => {
    if (locator !== undefined && url !== undefined && locator.current() !== url) {
      // Opened before the primary changed: never used again (reads there could be stale).
      void destroy();
      throw new FormerPrimaryError();
    }
    const limit = options.queryTimeoutMs;
    if (limit === undefined) return watched(inner.query(text, values));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        suspectOn(new QueryTimeoutError(limit));
        void destroy();
        reject(new QueryTimeoutError(limit));
      }, limit);
    });
    try {
      return await Promise.race([watched(inner.query(text, values)), timedOut]);
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
