import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../src/platform/db.js';
import { sql } from '../src/platform/sql.js';
import { runCli, cliPath } from '../test/support/cli.js';
import { startS3Server, s3rverCredentials, type S3TestServer } from '../test/support/s3Server.js';
import { tcpProxy, type TcpProxy } from '../test/support/tcpProxy.js';

export type Role = 'api' | 'projector' | 'worker';

/** One `supply-api serve` process with its own proxies, so that each can lose its database or S3 alone. */
export type ServiceProcess = {
  readonly name: string;
  readonly role: Role;
  readonly postgres: TcpProxy;
  readonly s3: TcpProxy;
  child?: ChildProcess;
  port: number;
  readonly base: () => string;
  /** Everything the process wrote on stderr/stdout so far (every run). */
  output: string;
};

export type Deployment = {
  readonly workspaceId: string;
  readonly memberId: string;
  readonly key: string;
  readonly databaseUrl: string;
  readonly pool: DatabasePool;
  readonly redis: TcpProxy;
  readonly s3: S3TestServer;
  readonly processes: ServiceProcess[];
  readonly env: Record<string, string>;
  byRole(role: Role): ServiceProcess[];
  /** Starts (again) a process: a killed one comes back on the same proxies. */
  start(service: ServiceProcess): Promise<void>;
  /** Ends every process with SIGTERM; the milliseconds each took to exit (or null if it had to be killed). */
  stopAll(graceMs: number): Promise<Record<string, number | null>>;
  close(): Promise<void>;
};

export type DeploymentOptions = { postgresAdminUrl: string; redisUrl: string; seed: number; log: (line: string) => void };

const seeded = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()) })) });

/**
 * A fresh database, seeded; a Redis queue of its own; an S3-compatible server (s3rver); and
 * 2 API processes, 2 projectors and 2 export workers on them.
 */
export async function startDeployment(options: DeploymentOptions): Promise<Deployment> {
  const name = `supply_drill_${randomBytes(6).toString('hex')}`;
  const admin = await createDatabasePool(options.postgresAdminUrl, 1);
  await admin.query(sql.typeAlias('void')`CREATE DATABASE ${sql.identifier([name])}`);
  const databaseUrl = withDatabase(options.postgresAdminUrl, name);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-drill-'));
  const s3 = await startS3Server('supply-drill-exports');
  const queueName = `drill-exports-${randomBytes(6).toString('hex')}`;
  const redisTarget = new URL(options.redisUrl);
  const redis = await tcpProxy({ host: redisTarget.hostname, port: Number(redisTarget.port) });
  await redis.start();
  const pgTarget = new URL(options.postgresAdminUrl);
  const s3Target = new URL(s3.endpoint);
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    EXPORT_QUEUE_NAME: queueName,
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'info',
    AWS_ACCESS_KEY_ID: s3rverCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3rverCredentials.secretAccessKey,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...s3.env,
  };
  const pool = await createDatabasePool(databaseUrl, 2);

  options.log('seeding');
  const seed = await runCli(['seed', '--tenants', '1', '--seed', String(options.seed)], env);
  if (seed.code !== 0) throw new Error(`seed failed: ${seed.stderr}`);
  const tenant = seeded.parse(JSON.parse(seed.stdout)).tenants[0];
  const memberId = tenant?.memberIds[0];
  if (tenant === undefined || memberId === undefined) throw new Error('the seed made no tenant');
  const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', memberId, '--scopes', 'orders:read,analytics:read', '--name', 'drill'], env);
  if (issued.code !== 0) throw new Error(`keys issue failed: ${issued.stderr}`);
  const key = z.object({ key: z.string() }).parse(JSON.parse(issued.stdout)).key;

  const processes: ServiceProcess[] = [];
  for (const role of ['api', 'api', 'projector', 'projector', 'worker', 'worker'] as const) {
    const postgres = await tcpProxy({ host: pgTarget.hostname, port: Number(pgTarget.port) });
    const s3Proxy = await tcpProxy({ host: s3Target.hostname, port: Number(s3Target.port) });
    await postgres.start();
    await s3Proxy.start();
    const service: ServiceProcess = {
      name: `${role}-${processes.filter((p) => p.role === role).length + 1}`,
      role,
      postgres,
      s3: s3Proxy,
      port: 0,
      base: () => `http://127.0.0.1:${service.port}`,
      output: '',
    };
    processes.push(service);
  }
  const logFile = createWriteStream(path.join(dataDir, 'services.log'));

  const start = async (service: ServiceProcess): Promise<void> => {
    const serviceEnv = {
      ...env,
      DATABASE_URL: withPort(databaseUrl, service.postgres.port),
      S3_ENDPOINT: `http://127.0.0.1:${service.s3.port}`,
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
    };
    const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--roles', service.role], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...serviceEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service.child = child;
    const append = (chunk: Buffer): void => {
      const text = chunk.toString();
      service.output += text;
      logFile.write(text.replace(/^/gm, `${service.name} `));
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    const from = service.output.length;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const serving = /"port":(\d+),"roles":\[[^\]]*\],"msg":"serving"/.exec(service.output.slice(from));
      if (serving?.[1] !== undefined) {
        service.port = Number(serving[1]);
        return;
      }
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`${service.name} did not start: ${service.output.slice(from)}`);
      }
      await sleep(50);
    }
  };

  await Promise.all(processes.map((service) => start(service)));
  options.log('started 2 api, 2 projector and 2 worker processes');

  return {
    workspaceId: tenant.workspaceId,
    memberId,
    key,
    databaseUrl,
    pool,
    redis,
    s3,
    processes,
    env,
    byRole: (role) => processes.filter((p) => p.role === role),
    start,
    stopAll: async (graceMs) => {
      const results = await Promise.all(
        processes.map(async (service) => [service.name, await stopWithin(service.child, graceMs)] as const),
      );
      return Object.fromEntries(results);
    },
    close: async () => {
      for (const service of processes) {
        if (service.child && service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
        await service.postgres.stop();
        await service.s3.stop();
      }
      await redis.stop();
      await pool.end();
      const queue = new Queue(queueName, { connection: { host: redisTarget.hostname, port: Number(redisTarget.port), maxRetriesPerRequest: 1 } });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await s3.close();
      logFile.end();
      if (process.env.DRILL_KEEP !== '1') await rm(dataDir, { recursive: true, force: true });
      await admin.query(sql.typeAlias('void')`DROP DATABASE IF EXISTS ${sql.identifier([name])} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** SIGTERM, then the time the process took to exit; SIGKILL and null when it outlived `graceMs`. */
export async function stopWithin(child: ChildProcess | undefined, graceMs: number): Promise<number | null> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return 0;
  const started = performance.now();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const inTime = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (inTime) return Math.round(performance.now() - started);
  child.kill('SIGKILL');
  await exited;
  return null;
}

function withDatabase(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function withPort(databaseUrl: string, port: number): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}
