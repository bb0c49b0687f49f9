import { appendFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createDatabasePool } from '../../src/platform/db.js';
import { migrate } from '../../src/platform/migrate.js';
import { sql } from '../../src/platform/sql.js';
import { z } from 'zod';
import { silentLogger } from './databases.js';
import { postgresServerUnavailable, postgresTools } from './postgresServer.js';
import { freePort } from './tcpProxy.js';
import { waitFor } from './waitFor.js';

/** Why a primary and standby of our own cannot be started here, or undefined when they can. */
export function standbyClusterUnavailable(): string | undefined {
  return postgresServerUnavailable();
}

export type StandbyCluster = {
  /** The application database on the primary (migrated). */
  readonly primaryUrl: string;
  /** The same database on the hot standby. */
  readonly standbyUrl: string;
  /** The primary's `postgres` database (superuser), for settings and checks. */
  readonly primaryAdminUrl: string;
  readonly standbyAdminUrl: string;
  /** The standby's name in the primary's pg_stat_replication (its cluster_name). */
  readonly standbyName: string;
  stopStandby(): Promise<void>;
  startStandby(): Promise<void>;
  /** `pg_wal_replay_pause()` / `pg_wal_replay_resume()` on the standby. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /**
   * The standby applies each commit this long after the primary made it (`recovery_min_apply_delay`;
   * 0 for none): a slow standby, on which a revocation that did not wait for it would be missed.
   */
  setApplyDelay(ms: number): Promise<void>;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

/**
 * A primary and one hot standby of our own, in a temporary folder, on free ports: `initdb`, then
 * `pg_basebackup -R` (the standby streams from the primary), `pg_ctl` to start and stop them,
 * run as the `postgres` user. The machine's own cluster (5432) is never touched. The standby is
 * named `standby1` (cluster_name), and `synchronous` puts it in the primary's
 * synchronous_standby_names from the start (otherwise the service's steward adds it).
 */
export async function startStandbyCluster(options: { database?: string; synchronous?: boolean; log?: (line: string) => void } = {}): Promise<StandbyCluster> {
  const { tool, folder: newFolder } = postgresTools();
  const log = options.log ?? (() => undefined);
  const folder = await newFolder('supply-standby-');
  const primaryDir = path.join(folder, 'primary');
  const standbyDir = path.join(folder, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const database = options.database ?? 'supply';
  const standbyName = 'standby1';
  const started: string[] = [];
  const pgCtl = (dir: string, action: 'start' | 'stop', port: number) =>
    tool('pg_ctl', action === 'start' ? ['-D', dir, '-l', `${dir}.log`, '-w', '-t', '60', '-o', `-p ${port}`, 'start'] : ['-D', dir, '-m', 'fast', '-w', '-t', '60', 'stop']);
  const url = (port: number, name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
  try {
    log(`initdb in ${primaryDir}`);
    await tool('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    await appendFile(
      path.join(primaryDir, 'postgresql.conf'),
      [
        '',
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${folder}'`,
        'wal_level = replica',
        'max_wal_senders = 8',
        'hot_standby = on',
        'wal_receiver_status_interval = 1s',
        'fsync = off',
        'full_page_writes = off',
        'synchronous_commit = on',
        "cluster_name = 'primary'",
        'max_connections = 100',
        "shared_buffers = '64MB'",
        options.synchronous === true ? `synchronous_standby_names = 'ANY 1 ("${standbyName}")'` : '',
        '',
      ].join('\n'),
    );
    await pgCtl(primaryDir, 'start', primaryPort);
    started.push(primaryDir);
    log(`pg_basebackup -R into ${standbyDir}`);
    await tool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '--no-sync']);
    // The standby is named by its cluster_name: the name its WAL receiver gives the primary.
    await appendFile(path.join(standbyDir, 'postgresql.auto.conf'), `\ncluster_name = '${standbyName}'\n`);
    await pgCtl(standbyDir, 'start', standbyPort);
    started.push(standbyDir);

    const primaryAdminUrl = url(primaryPort, 'postgres');
    const standbyAdminUrl = url(standbyPort, 'postgres');
    const admin = await createDatabasePool(primaryAdminUrl, 1);
    const standbyAdmin = await createDatabasePool(standbyAdminUrl, 1);
    const lsnRow = z.object({ lsn: z.string() });
    const caughtUp = async (timeoutMs = 30_000): Promise<void> => {
      const target = await admin.oneFirst(sql.type(lsnRow)`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`);
      await waitFor('the standby to catch up', timeoutMs, async () => {
        const replay = await standbyAdmin
          .oneFirst(sql.type(z.object({ lsn: z.string().nullable() }))`SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text AS lsn`)
          .catch(() => null);
        return replay !== null && BigInt(replay) >= BigInt(target);
      }, 50);
    };
    try {
      await admin.query(sql.typeAlias('void')`CREATE DATABASE ${sql.identifier([database])}`);
      const pool = await createDatabasePool(url(primaryPort, database), 2);
      try {
        await migrate(pool, silentLogger);
      } finally {
        await pool.end();
      }
      await caughtUp();
    } catch (error) {
      await admin.end();
      await standbyAdmin.end();
      throw error;
    }
    let standbyRunning = true;
    return {
      primaryUrl: url(primaryPort, database),
      standbyUrl: url(standbyPort, database),
      primaryAdminUrl,
      standbyAdminUrl,
      standbyName,
      stopStandby: async () => {
        await pgCtl(standbyDir, 'stop', standbyPort);
        standbyRunning = false;
      },
      startStandby: async () => {
        await pgCtl(standbyDir, 'start', standbyPort);
        standbyRunning = true;
      },
      pauseReplay: async () => {
        await standbyAdmin.query(sql.typeAlias('void')`SELECT FROM pg_wal_replay_pause()`);
      },
      resumeReplay: async () => {
        await standbyAdmin.query(sql.typeAlias('void')`SELECT FROM pg_wal_replay_resume()`);
      },
      setApplyDelay: async (ms) => {
        await standbyAdmin.query(sql.typeAlias('void')`ALTER SYSTEM SET recovery_min_apply_delay = ${sql.literalValue(`${Math.round(ms)}ms`)}`);
        await standbyAdmin.query(sql.typeAlias('void')`SELECT FROM pg_reload_conf()`);
      },
      caughtUp,
      close: async () => {
        await standbyAdmin.end();
        await admin.end();
        if (standbyRunning) await pgCtl(standbyDir, 'stop', standbyPort).catch(() => undefined);
        await pgCtl(primaryDir, 'stop', primaryPort).catch(() => undefined);
        await rm(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const dir of started.reverse()) await tool('pg_ctl', ['-D', dir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}
