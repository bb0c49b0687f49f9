import {
  createBigintTypeParser,
  createNumericTypeParser,
  createPool,
  type DatabasePool,
  type DatabaseTransactionConnection,
  type DriverTypeParser,
} from 'slonik';
import type { Config } from '../config/config.js';
import type { Logger } from './logger.js';
import { namingSetting } from './startupErrors.js';
import { sql } from './sql.js';
import { z } from 'zod';
import { createResilientPgDriverFactory } from './resilientDriver.js';
import { createResultParserInterceptor } from './resultParser.js';
import { primaryLocator } from './primaryLocator.js';

export type DatabaseKind = 'postgres' | 'pglite';

export type Database = {
  readonly pool: DatabasePool;
  readonly kind: DatabaseKind;
  /** Where the pool connects; for PGlite, the loopback port of the hosting process. */
  readonly connectionUri: string;
  close(): Promise<void>;
};

/** Timestamps leave the database as ISO 8601 UTC strings with milliseconds. */
const timestampTypeParser = (name: 'timestamptz' | 'timestamp'): DriverTypeParser => ({
  name,
  parse: (value: string) => new Date(Date.parse(name === 'timestamp' ? `${value}Z` : value)).toISOString(),
});

export const typeParsers: readonly DriverTypeParser[] = [
  createBigintTypeParser(),
  createNumericTypeParser(),
  timestampTypeParser('timestamptz'),
  timestampTypeParser('timestamp'),
  { name: 'date', parse: (value: string) => value },
];

export type OpenDatabaseOptions = {
  /** `serve` hosts the embedded database itself; commands may join a running host. */
  mustHostEmbedded?: boolean;
  maximumPoolSize?: number;
};

export async function openDatabase(config: Config, logger: Logger, options: OpenDatabaseOptions = {}): Promise<Database> {
  const databaseUrl = config.databaseUrl;
  if (databaseUrl) {
    // A first statement now makes an unreachable or misconfigured database fail here, with an
    // error naming DATABASE_URL, rather than deep inside a command.
    const pool = await namingSetting('DATABASE_URL', 'PostgreSQL', databaseUrl, async () => {
      const opened = await createDatabasePool(databaseUrl, options.maximumPoolSize ?? 10, 'postgres');
      try {
        await opened.oneFirst(sql.type(z.object({ reachable: z.boolean() }))`SELECT true AS reachable`);
        return opened;
      } catch (error) {
        await opened.end();
        throw error;
      }
    });
    return { pool, kind: 'postgres', connectionUri: databaseUrl, close: () => pool.end() };
  }
  // Loaded only when needed: PGlite costs tens of megabytes a process with DATABASE_URL never uses.
  const { openEmbeddedDatabase } = await import('./pgliteHost.js');
  const embedded = await openEmbeddedDatabase(config.dataDir, logger, { mustHost: options.mustHostEmbedded ?? false });
  try {
    const pool = await createDatabasePool(embedded.connectionUri, options.maximumPoolSize ?? 4, 'pglite');
    return {
      pool,
      kind: 'pglite',
      connectionUri: embedded.connectionUri,
      close: async () => {
        await pool.end();
        await embedded.close();
      },
    };
  } catch (error) {
    await embedded.close();
    throw error;
  }
}

/**
 * Bounds of the request-serving pool, so that a request ends in bounded time while Postgres is
 * away: Postgres cancels a statement after `statementMs`; the client gives up on it (and its
 * connection) after `queryMs`, which also covers an unreachable server; a connection attempt
 * fails after `connectionMs`.
 */
export const requestPoolTimeouts = { statementMs: 10_000, queryMs: 12_000, connectionMs: 3_000 } as const;

export type PoolOptions = {
  readonly resetOnRelease?: boolean;
  /** Server- and client-side statement bounds; absent for pools that run long statements (projector, replay, migrations). */
  readonly timeouts?: { readonly statementMs: number; readonly queryMs: number; readonly connectionMs: number };
};

export async function createDatabasePool(
  connectionUri: string,
  maximumPoolSize: number,
  kind: DatabaseKind = 'postgres',
  options: PoolOptions = {},
): Promise<DatabasePool> {
  const { timeouts } = options;
  // A multi-host URL (libpq's form): each connection goes to the primary of the moment.
  const locator = kind === 'postgres' ? primaryLocator(connectionUri) : undefined;
  return createPool(withUtcSession(locator?.urls[0] ?? connectionUri), {
    interceptors: [createResultParserInterceptor()],
    typeParsers,
    maximumPoolSize,
    driverFactory: createResilientPgDriverFactory({
      destroyTimeoutMs: 2_000,
      ...(locator?.multiHost === true ? { locator } : {}),
      ...(timeouts === undefined ? {} : { queryTimeoutMs: timeouts.queryMs }),
    }),
    connectionTimeout: timeouts?.connectionMs ?? 10_000,
    statementTimeout: timeouts?.statementMs ?? 'DISABLE_TIMEOUT',
    // A client destroyed mid-query waits this long for the query before closing the socket.
    gracefulTerminationTimeout: 1_000,
    idleTimeout: 10_000,
    idleInTransactionSessionTimeout: 'DISABLE_TIMEOUT',
    // PGlite is one session shared by every socket connection: DISCARD ALL on release would drop
    // settings and advisory locks that other connections hold.
    // A pool whose users never change session state (the API's) skips the reset: it would double
    // the statements of every request.
    ...(kind === 'pglite' || options.resetOnRelease === false ? { resetConnection: async () => {} } : {}),
  });
}

/**
 * The open transaction commits with `synchronous_commit = remote_apply`: its commit returns (and
 * becomes visible on the primary) only once every synchronous standby named by the primary's
 * `synchronous_standby_names` has applied it, so that a standby serving reads sees it on the very
 * next statement. With no synchronous standby it is an ordinary commit. For changes of who may
 * read: key issuance and revocation, tenant and member statuses.
 */
export async function commitToStandbys(transaction: DatabaseTransactionConnection): Promise<void> {
  await transaction.query(sql.typeAlias('void')`SET LOCAL synchronous_commit = remote_apply`);
}

/**
 * The open transaction commits once its WAL is flushed on the primary, without waiting for any
 * synchronous standby (`synchronous_commit = local`): for writes the standbys need not have before
 * the commit returns (the projector's read models, which the log rebuilds).
 */
export async function commitLocally(transaction: DatabaseTransactionConnection): Promise<void> {
  await transaction.query(sql.typeAlias('void')`SET LOCAL synchronous_commit = local`);
}

/** Every session runs in UTC, whatever the server's default zone. */
export function withUtcSession(connectionUri: string): string {
  const url = new URL(connectionUri);
  if (!url.searchParams.has('options')) {
    url.searchParams.set('options', '-c TimeZone=UTC');
  }
  return url.toString();
}
