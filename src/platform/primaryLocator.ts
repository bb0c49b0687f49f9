import pg from 'pg';
import { z } from 'zod';
import { parsePostgresUrl } from '../config/postgresUrl.js';
import { driverText, sql } from './sql.js';

/**
 * Which server of a DATABASE_URL is the primary, as libpq's `target_session_attrs=read-write`
 * picks it: the first of the hosts, in the order written, whose `pg_is_in_recovery()` is false.
 * One per URL in the process, shared by every pool and client that writes through it. A URL of one
 * server is its own primary: nothing is asked, nothing is added to any connection.
 */
export type PrimaryLocator = {
  /** One single-server URL per host of the setting. */
  readonly urls: readonly string[];
  readonly multiHost: boolean;
  /** The URL of the primary, found first when not known (throws NoPrimaryError when none answers as one). */
  locate(): Promise<string>;
  /** The primary as last found (undefined while unknown). */
  current(): string | undefined;
  /**
   * A connection to `url` failed, or the server refused a write or shut down: the next connection
   * finds the primary again (a switchover or failover is followed without a restart).
   */
  suspect(url: string): void;
};

/** No host of a multi-host URL answered as a primary (all down, or all standbys while one is promoted). */
export class NoPrimaryError extends Error {
  readonly code = 'NO_PRIMARY';
  constructor(hosts: readonly string[], reasons: readonly string[]) {
    super(`no primary among ${hosts.join(', ')}: ${reasons.join('; ')}`);
    this.name = 'NoPrimaryError';
  }
}

/** How long one host gets to answer whether it is the primary. */
export const discoveryTimeoutMs = 2_000;
/** Discoveries that found no primary are not repeated more often than this (callers meanwhile share the last answer). */
const retryAfterFailureMs = 250;

const recoveryQuery = sql.type(z.object({ recovering: z.boolean() }))`SELECT pg_is_in_recovery() AS recovering`;

const locators = new Map<string, PrimaryLocator>();

/** The process's locator of a connection URL's primary. */
export function primaryLocator(connectionUri: string): PrimaryLocator {
  const known = locators.get(connectionUri);
  if (known !== undefined) return known;
  const locator = createPrimaryLocator(connectionUri);
  locators.set(connectionUri, locator);
  return locator;
}

/** `host:port` of a single-server URL (never credentials). */
export function hostLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port === '' ? '5432' : parsed.port}`;
}

/** Asks one server whether it is in recovery; true for a primary. */
async function answersAsPrimary(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: discoveryTimeoutMs, query_timeout: discoveryTimeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const result = await client.query(driverText(recoveryQuery));
    return !recoveryQuery.parser.parse(result.rows[0]).recovering;
  } finally {
    void client.end().catch(() => undefined);
  }
}

function createPrimaryLocator(connectionUri: string): PrimaryLocator {
  let urls: readonly string[];
  try {
    urls = parsePostgresUrl(connectionUri).urls;
  } catch {
    urls = [connectionUri];
  }
  if (urls.length <= 1) {
    return { urls: [connectionUri], multiHost: false, locate: async () => connectionUri, current: () => connectionUri, suspect: () => undefined };
  }
  let primary: string | undefined;
  let discovering: Promise<string> | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  let lastFailure: NoPrimaryError | undefined;

  const discover = async (): Promise<string> => {
    const answers = await Promise.allSettled(urls.map(answersAsPrimary));
    const index = answers.findIndex((answer) => answer.status === 'fulfilled' && answer.value);
    const found = index < 0 ? undefined : urls[index];
    if (found !== undefined) return found;
    const reasons = answers.map((answer, i) =>
      `${hostLabel(urls[i] ?? '')} ${answer.status === 'fulfilled' ? 'is a standby' : answer.reason instanceof Error ? answer.reason.message : String(answer.reason)}`,
    );
    throw new NoPrimaryError(urls.map(hostLabel), reasons);
  };

  return {
    urls,
    multiHost: true,
    current: () => primary,
    locate: async () => {
      if (primary !== undefined) return primary;
      if (discovering === undefined && lastFailure !== undefined && performance.now() - failedAt < retryAfterFailureMs) throw lastFailure;
      discovering ??= discover()
        .then((found) => {
          primary = found;
          lastFailure = undefined;
          return found;
        })
        .catch((error: unknown) => {
          failedAt = performance.now();
          lastFailure = error instanceof NoPrimaryError ? error : new NoPrimaryError(urls.map(hostLabel), [String(error)]);
          throw lastFailure;
        })
        .finally(() => {
          discovering = undefined;
        });
      return discovering;
    },
    suspect: (url) => {
      if (primary === url) primary = undefined;
    },
  };
}

/** SQLSTATEs after which the server is no longer taken for the primary: read-only transaction, shut down (admin, crash), cannot connect now, connection failures. */
const notPrimaryStates = new Set(['25006', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
/** Errors of the socket: the server is not there. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const name = (current as { name?: unknown }).name;
    if (typeof name === 'string') codes.push(name);
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && /Connection terminated|timeout expired|Client has encountered a connection error|Connection ended/i.test(message)) codes.push('CONNECTION_LOST');
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * Whether an error says the database cannot be reached or is not (any longer) the primary: a
 * refused or dropped connection, a server shutting down, a read-only server, no primary found, a
 * query that got no answer. Such a failure is the database's absence, not a fault of the request.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  return codesOf(error).some(
    (code) =>
      notPrimaryStates.has(code) ||
      socketCodes.has(code) ||
      code === 'NO_PRIMARY' ||
      code === 'CONNECTION_LOST' ||
      code === 'QueryTimeoutError' ||
      code === 'ConnectionError' ||
      code === 'BackendTerminatedError' ||
      code === 'BackendTerminatedUnexpectedlyError',
  );
}

/**
 * A pg client of the primary of `connectionUri` (its session settings applied by `session`): for
 * a multi-host URL it finds the primary when it connects, and a failure of its connection makes
 * the locator look again. For one server, a plain client as before.
 */
export function createPrimaryClient(connectionUri: string, config: Omit<pg.ClientConfig, 'connectionString'> = {}, session: (url: string) => string = (url) => url): pg.Client {
  const locator = primaryLocator(connectionUri);
  if (!locator.multiHost) return new pg.Client({ ...config, connectionString: session(connectionUri) });
  return new (locatedClientClass(locator, session))({ ...config, connectionString: session(locator.urls[0] ?? connectionUri) });
}

type ClientInternals = { host: string; port: number; connectionParameters: { host: string; port: number } };

/** pg.Client whose `connect` goes to the locator's primary of the moment (pg.Pool's `Client` option takes it too). */
export function locatedClientClass(locator: PrimaryLocator, session: (url: string) => string = (url) => url): typeof pg.Client {
  class LocatedClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const connecting = locator.locate().then(async (url) => {
        const target = new URL(session(url));
        const internals = this as unknown as ClientInternals;
        internals.host = target.hostname;
        internals.port = Number(target.port === '' ? '5432' : target.port);
        internals.connectionParameters.host = internals.host;
        internals.connectionParameters.port = internals.port;
        this.on('error', (error: unknown) => {
          if (isDatabaseUnreachable(error)) locator.suspect(url);
        });
        try {
          await super.connect();
          return this as pg.Client;
        } catch (error) {
          locator.suspect(url);
          throw error;
        }
      });
      if (callback === undefined) return connecting;
      const done = callback as (err: Error | null, c?: pg.Client) => void;
      connecting.then(
        (client) => done(null, client),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    }
  }
  return LocatedClient;
}
