import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { keepExtendedQueryBatchesTogether } from './pgliteQueueAffinity.js';
import type { Logger } from './logger.js';
import { heldBy, isAlive, readHostRecord, type HostRecord } from './embeddedHostRecord.js';
import { StartupError } from './startupErrors.js';
import { acceptsConnections } from './tcpProbe.js';

/**
 * The embedded database: PGlite files under DATA_DIR/pglite, opened by exactly one process (the
 * host) and served over the Postgres wire protocol on a loopback port, so that other local processes
 * (`supply-api keys issue` while `serve` runs) reach the same data. The host writes its pid and port
 * to host.json; a lock file created with O_EXCL decides who hosts when processes start at once.
 */
export type EmbeddedDatabase = {
  readonly connectionUri: string;
  readonly hosted: boolean;
  close(): Promise<void>;
};


const maxConnections = 24;

export async function openEmbeddedDatabase(
  dataDir: string,
  logger: Logger,
  options: { mustHost?: boolean; waitMs?: number } = {},
): Promise<EmbeddedDatabase> {
  const dir = path.join(dataDir, 'pglite');
  await mkdir(dir, { recursive: true });
  const hostFile = path.join(dir, 'host.json');
  const lockFile = path.join(dir, 'host.lock');
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  let announcedWait = false;

  for (;;) {
    const host = await readHostRecord(hostFile);
    if (host && isAlive(host.pid) && (await acceptsConnections('127.0.0.1', host.port))) {
      if (!options.mustHost) {
        return { connectionUri: uriFor(host.port), hosted: false, close: async () => {} };
      }
      // Only one process can host it, and this one must (serve): waiting would be waiting for that one to stop.
      throw new StartupError(`${heldBy(dir, host)}; stop that process (or use it: it serves this DATA_DIR), or give this one another DATA_DIR or a DATABASE_URL`);
    } else if (await tryCreateLock(lockFile)) {
      try {
        return await hostDatabase(dir, hostFile, lockFile, logger);
      } catch (error) {
        await rm(lockFile, { force: true });
        throw error;
      }
    } else {
      await clearStaleLock(lockFile);
    }
    const opener = await lockHolder(lockFile);
    if (Date.now() > deadline) {
      throw new StartupError(
        `the embedded database in ${dir} is still being opened by ${opener === undefined ? 'another process' : `process ${opener}`} after ${Math.round((options.waitMs ?? 60_000) / 1000)} s; stop it, or set another DATA_DIR or a DATABASE_URL`,
      );
    }
    if (!announcedWait) {
      logger.info({ dir, pid: opener }, `waiting for ${opener === undefined ? 'another process' : `process ${opener}`}, which is opening the embedded database`);
      announcedWait = true;
    }
    await delay(150);
  }
}

async function hostDatabase(dir: string, hostFile: string, lockFile: string, logger: Logger): Promise<EmbeddedDatabase> {
  const db = await PGlite.create(path.join(dir, 'data'));
  await db.exec(`SET TIME ZONE 'UTC'`);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  keepExtendedQueryBatchesTogether(server);
  await server.start();
  const port = listeningPort(server);
  const temporary = `${hostFile}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify({ pid: process.pid, port } satisfies HostRecord));
  await rename(temporary, hostFile);
  logger.debug({ port, dir }, 'hosting the embedded database');
  let closed = false;
  return {
    connectionUri: uriFor(port),
    hosted: true,
    close: async () => {
      if (closed) return;
      closed = true;
      await rm(hostFile, { force: true });
      await server.stop();
      await db.close();
      await rm(lockFile, { force: true });
    },
  };
}

async function lockHolder(lockFile: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(lockFile, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function listeningPort(server: PGLiteSocketServer): number {
  const connectionString = server.getServerConn();
  const port = Number(connectionString.split(':').pop());
  if (!Number.isInteger(port) || port <= 0) {
    throw new Error(`the embedded database server did not report a port (${connectionString})`);
  }
  return port;
}

function uriFor(port: number): string {
  return `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
}

async function tryCreateLock(lockFile: string): Promise<boolean> {
  try {
    const handle = await open(lockFile, 'wx');
    await handle.writeFile(String(process.pid));
    await handle.close();
    return true;
  } catch (error) {
    if (isErrno(error) && error.code === 'EEXIST') return false;
    throw error;
  }
}

async function clearStaleLock(lockFile: string): Promise<void> {
  try {
    const pid = Number((await readFile(lockFile, 'utf8')).trim());
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) {
      await rm(lockFile, { force: true });
    }
  } catch {
    // The lock vanished between the two calls: the next round decides again.
  }
}

function isErrno(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}
