import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { createDatabasePool } from '../../src/platform/db.js';
import { migrate } from '../../src/platform/migrate.js';
import { sql } from '../../src/platform/sql.js';
import { silentLogger } from './databases.js';
import { postgresBinDir } from './postgresServer.js';
import { freePort } from './tcpProxy.js';
import { onPath } from './onPath.js';
import { waitFor } from './waitFor.js';

const run = promisify(execFile);

/**
 * Patroni's timings for the tests and the drill: the leader key lives `ttl` seconds; a leader that
 * cannot renew it within `retryTimeout` demotes itself.
 */
export const patroniTimings = { ttl: 20, loopWait: 2, retryTimeout: 5 } as const;

/**
 * The service's read lease (READ_REPLICA_LEASE_MS) under these timings, for the tests and the
 * drill: at least ttl + loopWait + 10 s (32 s), so that reads go on from a leased standby through
 * the promotion (docs/operators.md), with room.
 */
export const patroniReadLeaseMs = 40_000;

export type PatroniMember = { readonly name: string; readonly port: number; readonly restPort: number };

export type PatroniCluster = {
  readonly members: readonly PatroniMember[];
  /** `postgres://postgres@127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/<database>`: DATABASE_URL and READ_DATABASE_URL of the service. */
  readonly url: string;
  /** The application database on one member (single-server URL). */
  urlOf(member: PatroniMember, database?: string): string;
  readonly database: string;
  readonly configFile: string;
  readonly timings: typeof patroniTimings;
  /** The member that is the leader now (its REST API says so). */
  leader(timeoutMs?: number): Promise<PatroniMember>;
  /** The member(s) Patroni has as synchronous standby now. */
  synchronous(): Promise<readonly PatroniMember[]>;
  /** SIGKILLs the member's Patroni, its postmaster and every backend (the machine is gone). `at`: performance.now() before the signals. */
  kill(member: PatroniMember): Promise<{ readonly at: number }>;
  /** Starts a killed member's Patroni again (it rejoins as a standby). */
  restart(member: PatroniMember): Promise<void>;
  /** `patronictl switchover --force` to a synchronous standby; resolves when the new leader answers. */
  switchover(): Promise<{ readonly from: PatroniMember; readonly to: PatroniMember }>;
  /** Waits until a member other than `former` leads and accepts writes; its time (performance.now()). */
  newLeader(former: PatroniMember, timeoutMs?: number): Promise<{ readonly leader: PatroniMember; readonly at: number }>;
  /** Waits until every running standby has replayed what the leader has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

/** Why a Patroni cluster cannot be started here (Debian's patroni, etcd-server, postgresql), or undefined. */
export function patroniClusterUnavailable(): string | undefined {
  const missing = ['patroni', 'patronictl', 'etcd'].filter((name) => onPath(name) === undefined);
  if (missing.length > 0) return `${missing.join(', ')} not found on PATH (Debian packages patroni and etcd-server)`;
  if (postgresBinDir() === undefined) return 'no PostgreSQL server binaries under /usr/lib/postgresql/<version>/bin';
  if (process.getuid?.() !== 0 && os.userInfo().username !== 'postgres') return 'Patroni must run as root (then as the postgres user) or as the postgres user';
  return undefined;
}


type Node = PatroniMember & { readonly dir: string; readonly config: string; child?: ChildProcess; output: string };

/**
 * etcd (one member) and three Patroni nodes of our own, each with its data folder in a temporary
 * folder, on free loopback ports, with `synchronous_mode: true`. Run as the `postgres` user
 * (spawned with its uid when we are root). Resolves once the leader has the database migrated and
 * a synchronous standby streams.
 */
export async function startPatroniCluster(options: { database?: string; log?: (line: string) => void } = {}): Promise<PatroniCluster> {
  const unavailable = patroniClusterUnavailable();
  if (unavailable !== undefined) throw new Error(`cannot start a Patroni cluster: ${unavailable}`);
  const log = options.log ?? (() => undefined);
  const database = options.database ?? 'supply';
  const bin = postgresBinDir() as string;
  const root = process.getuid?.() === 0;
  const ids = root ? { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()) } : {};
  const folder = await mkdtemp(path.join(os.tmpdir(), 'supply-patroni-'));
  if (ids.uid !== undefined && ids.gid !== undefined) await chown(folder, ids.uid, ids.gid);
  const scope = `supply-${path.basename(folder).slice(-6).toLowerCase()}`;
  const etcdClient = await freePort();
  const etcdPeer = await freePort();
  let etcd: ChildProcess | undefined;
  let etcdOutput = '';
  const nodes: Node[] = [];
  const env = { ...process.env, LC_ALL: 'C.UTF-8', HOME: folder, PATH: `${bin}:${process.env.PATH ?? ''}` };

  const spawnAs = (command: string, args: readonly string[], node?: Node): ChildProcess => {
    const child = spawn(command, args, { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'], ...ids });
    const append = (chunk: Buffer): void => {
      if (node === undefined) etcdOutput = (etcdOutput + chunk.toString()).slice(-20_000);
      else node.output = (node.output + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    return child;
  };

  const rest = async (node: PatroniMember, route: string): Promise<number> => {
    try {
      const response = await fetch(`http://127.0.0.1:${node.restPort}${route}`, { signal: AbortSignal.timeout(1500) });
      await response.body?.cancel();
      return response.status;
    } catch {
      return 0;
    }
  };
  const urlOf = (member: PatroniMember, name = database) => `postgres://postgres@127.0.0.1:${member.port}/${name}`;
  const running = (node: Node) => node.child !== undefined && node.child.exitCode === null && node.child.signalCode === null;

  const leaderNow = async (): Promise<Node | undefined> => {
    for (const node of nodes) if (running(node) && (await rest(node, '/primary')) === 200) return node;
    return undefined;
  };
  const leader = async (timeoutMs = 90_000): Promise<Node> => {
    let found: Node | undefined;
    await waitFor('a Patroni leader', timeoutMs, async () => {
      found = await leaderNow();
      return found !== undefined;
    });
    return found as Node;
  };
  const synchronous = async (): Promise<Node[]> => {
    const found: Node[] = [];
    for (const node of nodes) if (running(node) && (await rest(node, '/sync')) === 200) found.push(node);
    return found;
  };
  const acceptsWrites = async (member: PatroniMember): Promise<boolean> => {
    const pool = await createDatabasePool(urlOf(member, 'postgres'), 1, 'postgres', { timeouts: { statementMs: 2000, queryMs: 2500, connectionMs: 2000 } });
    try {
      return !(await pool.oneFirst(sql.type(z.object({ r: z.boolean() }))`SELECT pg_is_in_recovery() AS r`));
    } catch {
      return false;
    } finally {
      await pool.end();
    }
  };
  const caughtUp = async (timeoutMs = 60_000): Promise<void> => {
    const lead = await leader();
    const pool = await createDatabasePool(urlOf(lead, 'postgres'), 1);
    try {
      const target = await pool.oneFirst(sql.type(z.object({ lsn: z.string() }))`SELECT pg_current_wal_lsn()::text AS lsn`);
      await waitFor('the standbys to replay the leader', timeoutMs, async () => {
        const behind = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
          SELECT count(*)::int AS n FROM pg_stat_replication WHERE replay_lsn IS NULL OR replay_lsn < ${target}::pg_lsn`);
        const streaming = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM pg_stat_replication`);
        return behind === 0 && streaming === nodes.filter(running).length - 1;
      });
    } finally {
      await pool.end();
    }
  };

  const postmasterPid = async (node: Node): Promise<number | undefined> => {
    const text = await readFile(path.join(node.dir, 'data', 'postmaster.pid'), 'utf8').catch(() => '');
    const pid = Number(text.split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  };
  const childrenOf = async (pid: number): Promise<number[]> => {
    const found: number[] = [];
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    }
    return found;
  };
  const signal = (pid: number): void => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const killNode = async (node: Node): Promise<{ at: number }> => {
    const postmaster = await postmasterPid(node);
    const backends = postmaster === undefined ? [] : await childrenOf(postmaster);
    const at = performance.now();
    if (node.child?.pid !== undefined) signal(node.child.pid);
    if (postmaster !== undefined) signal(postmaster);
    for (const pid of backends) signal(pid);
    if (node.child !== undefined && running(node)) await new Promise((resolve) => node.child?.once('exit', resolve));
    return { at };
  };
  const startNode = async (node: Node): Promise<void> => {
    node.child = spawnAs('patroni', [node.config], node);
  };

  const close = async (): Promise<void> => {
    await Promise.all(nodes.map(async (node) => {
      if (!running(node)) {
        // A killed node's postgres may have been restarted by nobody; make sure nothing is left.
        const pid = await postmasterPid(node);
        if (pid !== undefined) signal(pid);
        return;
      }
      const exited = new Promise((resolve) => node.child?.once('exit', resolve));
      node.child?.kill('SIGTERM');
      const timer = setTimeout(() => void killNode(node), 20_000);
      await exited;
      clearTimeout(timer);
    }));
    if (etcd !== undefined && etcd.exitCode === null) {
      const exited = new Promise((resolve) => etcd?.once('exit', resolve));
      etcd.kill('SIGKILL');
      await exited;
    }
    await rm(folder, { recursive: true, force: true });
  };

  try {
    const etcdDir = path.join(folder, 'etcd');
    await mkdir(etcdDir);
    if (ids.uid !== undefined && ids.gid !== undefined) await chown(etcdDir, ids.uid, ids.gid);
    etcd = spawnAs('etcd', [
      '--name', 'etcd1', '--data-dir', etcdDir,
      '--listen-client-urls', `http://127.0.0.1:${etcdClient}`, '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`,
      '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster', `etcd1=http://127.0.0.1:${etcdPeer}`, '--enable-v2=true',
    ]);
    await waitFor('etcd to answer', 20_000, async () => {
      if (etcd?.exitCode !== null) throw new Error(`etcd exited: ${etcdOutput.slice(-2000)}`);
      const response = await fetch(`http://127.0.0.1:${etcdClient}/health`).catch(() => undefined);
      return response?.ok === true;
    });

    for (const name of ['pg1', 'pg2', 'pg3']) {
      const dir = path.join(folder, name);
      await mkdir(dir, { mode: 0o700 });
      if (ids.uid !== undefined && ids.gid !== undefined) await chown(dir, ids.uid, ids.gid);
      const port = await freePort();
      const restPort = await freePort();
      const config = path.join(dir, 'patroni.yml');
      await writeFile(config, patroniYaml({ scope, name, dir, port, restPort, etcdClient, bin, socketDir: folder }));
      if (ids.uid !== undefined && ids.gid !== undefined) await chown(config, ids.uid, ids.gid);
      nodes.push({ name, port, restPort, dir, config, output: '' });
    }
    // One of them wins the initialize key and bootstraps (initdb); the others copy it (pg_basebackup).
    const [first] = nodes as [Node, Node, Node];
    for (const node of nodes) await startNode(node);
    const lead = await leader(120_000).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${nodes.map((n) => n.output.slice(-1500)).join('\n')}`);
    });
    const admin = await createDatabasePool(urlOf(lead, 'postgres'), 1);
    try {
      await admin.query(sql.typeAlias('void')`CREATE DATABASE ${sql.identifier([database])}`);
    } finally {
      await admin.end();
    }
    const pool = await createDatabasePool(urlOf(lead), 2);
    try {
      await migrate(pool, silentLogger);
    } finally {
      await pool.end();
    }
    await waitFor('a synchronous standby', 120_000, async () => (await synchronous()).length >= 1);
    await caughtUp(120_000);
    log(`patroni ${scope}: ${nodes.map((n) => `${n.name} :${n.port} (rest :${n.restPort})`).join(', ')}; leader ${lead.name}`);

    const configFile = first.config;
    return {
      members: nodes.map(({ name, port, restPort }) => ({ name, port, restPort })),
      url: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/${database}`,
      urlOf,
      database,
      configFile,
      timings: patroniTimings,
      leader: (timeoutMs) => leader(timeoutMs),
      synchronous: () => synchronous(),
      kill: async (member) => killNode(nodeOf(nodes, member)),
      restart: async (member) => startNode(nodeOf(nodes, member)),
      switchover: async () => {
        const from = await leader();
        let to: Node | undefined;
        await waitFor('a synchronous standby to switch over to', 90_000, async () => {
          [to] = await synchronous();
          return to !== undefined;
        });
        const target = to as Node | undefined;
        if (target === undefined) throw new Error('unreachable');
        await run('patronictl', ['-c', configFile, 'switchover', '--leader', from.name, '--candidate', target.name, '--force', scope], { env, ...ids });
        await waitFor(`${target.name} to lead and accept writes`, 60_000, async () => (await rest(target, '/primary')) === 200 && (await acceptsWrites(target)));
        return { from, to: target };
      },
      newLeader: async (former, timeoutMs = 90_000) => {
        let found: Node | undefined;
        await waitFor('a new leader that accepts writes', timeoutMs, async () => {
          const now = await leaderNow();
          if (now === undefined || now.name === former.name || !(await acceptsWrites(now))) return false;
          found = now;
          return true;
        });
        return { leader: found as Node, at: performance.now() };
      },
      caughtUp,
      close,
    };
  } catch (error) {
    log(`patroni cluster failed to start: ${nodes.map((n) => `${n.name}: ${n.output.slice(-1500)}`).join('\n')}`);
    await close().catch(() => undefined);
    throw error;
  }
}

function nodeOf(nodes: readonly Node[], member: PatroniMember): Node {
  const node = nodes.find((candidate) => candidate.name === member.name);
  if (node === undefined) throw new Error(`no member ${member.name}`);
  return node;
}

function patroniYaml(n: { scope: string; name: string; dir: string; port: number; restPort: number; etcdClient: number; bin: string; socketDir: string }): string {
  const t = patroniTimings;
  return `scope: ${n.scope}
name: ${n.name}
namespace: /service/
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:${n.restPort}
  connect_address: 127.0.0.1:${n.restPort}
etcd3:
  hosts: 127.0.0.1:${n.etcdClient}
bootstrap:
  dcs:
    ttl: ${t.ttl}
    loop_wait: ${t.loopWait}
    retry_timeout: ${t.retryTimeout}
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: false
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_receiver_status_interval: 1s
        hot_standby_feedback: 'on'
        fsync: 'off'
        max_connections: 100
        shared_buffers: 32MB
  initdb:
    - encoding: UTF8
    - auth: trust
    - no-sync
  pg_hba:
    - local all all trust
    - host replication all 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${n.port}
  connect_address: 127.0.0.1:${n.port}
  data_dir: ${n.dir}/data
  bin_dir: ${n.bin}
  pgpass: ${n.dir}/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
  parameters:
    unix_socket_directories: '${n.socketDir}'
  pg_hba:
    - local all all trust
    - host replication all 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
`;
}

