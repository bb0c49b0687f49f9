import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../src/platform/db.js';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import { migrate } from '../../src/platform/migrate.js';
import { openEmbeddedDatabase } from '../../src/platform/pgliteHost.js';
import { sql } from '../../src/platform/sql.js';
import { testPostgresAdminUrl } from './services.js';
import { testDatabasePrefix } from './testDatabaseCleanup.js';

export const silentLogger: Logger = createLogger('silent');

export type TestDatabase = {
  readonly kind: 'postgres' | 'pglite';
  readonly url: string;
  readonly pool: DatabasePool;
  /** For PGlite: the DATA_DIR holding it. */
  readonly dataDir?: string;
  close(): Promise<void>;
};

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A fresh, migrated Postgres database of its own, dropped on close: on the shared test cluster, or
 * on the cluster of `adminUrl` (a file's own, see ownCluster.ts).
 */
export async function createPostgresTestDatabase(options: { migrated?: boolean; adminUrl?: string } = {}): Promise<TestDatabase> {
  // The run's prefix (globalSetup), so that an interrupted run drops what its tests left.
  const name = `${process.env.TEST_DATABASE_PREFIX ?? testDatabasePrefix}${randomBytes(6).toString('hex')}`;
  const adminUrl = options.adminUrl ?? testPostgresAdminUrl;
  const admin = await createDatabasePool(adminUrl, 1);
  await admin.query(sql.typeAlias('void')`CREATE DATABASE ${sql.identifier([name])}`);
  const url = databaseUrl(adminUrl, name);
  const pool = await createDatabasePool(url, 10);
  if (options.migrated ?? true) {
    await migrate(pool, silentLogger);
  }
  return {
    kind: 'postgres',
    url,
    pool,
    close: async () => {
      await pool.end();
      await admin.query(sql.typeAlias('void')`DROP DATABASE IF EXISTS ${sql.identifier([name])} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** A fresh, migrated embedded PGlite database in a temporary DATA_DIR. */
export async function createPgliteTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-pglite-'));
  const embedded = await openEmbeddedDatabase(dataDir, silentLogger, { mustHost: true });
  const pool = await createDatabasePool(embedded.connectionUri, 4, 'pglite');
  if (options.migrated ?? true) {
    await migrate(pool, silentLogger);
  }
  return {
    kind: 'pglite',
    url: embedded.connectionUri,
    pool,
    dataDir,
    close: async () => {
      await pool.end();
      await embedded.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
