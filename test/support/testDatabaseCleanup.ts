import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createDatabasePool } from '../../src/platform/db.js';
import { sql } from '../../src/platform/sql.js';
import { stopOwnClustersOfRun } from './ownCluster.js';

/** Every test database's name starts with this, then the run's tag (see `newRunDatabasePrefix`). */
export const testDatabasePrefix = 'supply_test_';

/**
 * The prefix of one test run's databases: `supply_test_` and a tag of its own, so that the run
 * drops its own databases, never those of another run sharing the server.
 */
export function newRunDatabasePrefix(): string {
  return `${testDatabasePrefix}${randomBytes(3).toString('hex')}_`;
}

/** Drops every database whose name starts with `prefix`; answers the names dropped. */
export async function dropTestDatabases(adminUrl: string, prefix: string): Promise<readonly string[]> {
  if (!prefix.startsWith(testDatabasePrefix)) throw new Error(`${prefix} is not a test database prefix`);
  const admin = await createDatabasePool(adminUrl, 1);
  try {
    const names = await admin.anyFirst(sql.type(z.object({ datname: z.string() }))`SELECT datname FROM pg_database WHERE starts_with(datname, ${prefix})`);
    for (const name of names) await admin.query(sql.typeAlias('void')`DROP DATABASE IF EXISTS ${sql.identifier([name])} WITH (FORCE)`);
    return names;
  } finally {
    await admin.end();
  }
}

const thisFile = fileURLToPath(import.meta.url);
const runTs = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));

/**
 * Drops a run's databases, and stops the clusters of its own it left (ownCluster.ts), from a
 * process of its own, detached (another process group, so that the same Ctrl-C does not stop it):
 * an interrupted vitest exits a moment after the signal, before anything asynchronous of its own
 * could finish.
 */
export function dropTestDatabasesDetached(adminUrl: string, prefix: string): void {
  spawn(process.execPath, [runTs, thisFile, adminUrl, prefix], { detached: true, stdio: 'ignore' }).unref();
}

// Run as a script (dropTestDatabasesDetached): a worker stopped by the same signal may still be
// creating a database when the first pass lists them, so passes go on until one finds none.
if (process.argv[1] === thisFile) {
  const [adminUrl, prefix] = process.argv.slice(2);
  if (adminUrl === undefined || prefix === undefined) throw new Error('usage: testDatabaseCleanup.ts ADMIN_URL PREFIX');
  for (let pass = 0; pass < 10; pass += 1) {
    const dropped = (await dropTestDatabases(adminUrl, prefix)).length + (await stopOwnClustersOfRun(prefix));
    if (dropped === 0 && pass > 0) break;
    await sleep(1000);
  }
}
