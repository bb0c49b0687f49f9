import { existsSync } from 'node:fs';
import { appendFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { postgresTools } from './postgresServer.js';
import { freePort } from './tcpProxy.js';

/** Each cluster's folder starts with this and the run's database prefix (test/globalSetup.ts), which names the run. */
const folderPrefix = 'supply-own-cluster-';

export type OwnCluster = {
  /** The cluster's `postgres` database (superuser, trust): where test databases are created. */
  readonly adminUrl: string;
  close(): Promise<void>;
};

/**
 * A Postgres cluster of the test file's own (`initdb` in a temporary folder, on a free loopback
 * port, run as the postgres user): the log's visible horizon (`pg_snapshot_xmin`) is cluster-wide,
 * so on the shared cluster a long transaction of another test file holds back what this file's
 * projector and change feeds may read. Throws when the server binaries are missing.
 */
export async function startOwnCluster(): Promise<OwnCluster> {
  const { tool, folder: newFolder } = postgresTools();
  const folder = await newFolder(`${folderPrefix}${process.env.TEST_DATABASE_PREFIX ?? ''}`);
  const dataDir = path.join(folder, 'data');
  const port = await freePort();
  let started = false;
  try {
    await tool('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    await appendFile(
      path.join(dataDir, 'postgresql.conf'),
      ['', "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${folder}'`, 'fsync = off', 'full_page_writes = off', 'synchronous_commit = off', 'max_connections = 100', "shared_buffers = '64MB'", ''].join('\n'),
    );
    await tool('pg_ctl', ['-D', dataDir, '-l', `${dataDir}.log`, '-w', '-t', '60', '-o', `-p ${port}`, 'start']);
    started = true;
    return {
      adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
      close: async () => {
        await tool('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']).catch(() => undefined);
        await rm(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (started) await tool('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Stops the clusters a run left running (a test stopped half way never reaches its clean-up) and
 * removes their folders: those of `runPrefix` only, never another run's. Answers how many it found.
 */
export async function stopOwnClustersOfRun(runPrefix: string): Promise<number> {
  const start = `${folderPrefix}${runPrefix}`;
  const left = (await readdir(os.tmpdir())).filter((name) => name.startsWith(start));
  if (left.length === 0) return 0;
  const { tool } = postgresTools();
  for (const name of left) {
    const dataDir = path.join(os.tmpdir(), name, 'data');
    if (existsSync(path.join(dataDir, 'postmaster.pid'))) await tool('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
  return left.length;
}
