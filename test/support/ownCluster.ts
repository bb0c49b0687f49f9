import { appendFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { postgresTools } from './postgresServer.js';
import { freePort } from './tcpProxy.js';

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
  const folder = await newFolder('supply-own-cluster-');
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
