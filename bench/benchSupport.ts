import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import { allProjections } from '../projections/index.js';
import type { EventStore } from '../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../src/eventStore/postgresEventStore.js';
import { createProgressBar } from '../src/cli/progressBar.js';
import { checkKeyRequester } from '../src/console/keyRequester.js';
import { seed } from '../src/console/seed.js';
import type { SeedSummary, TenantSummary } from '../src/console/seedSummary.js';
import { historyDefaults, historyScales, type HistoryParams, type HistoryScale } from '../src/console/history/historyParams.js';
import { issueKey, type IssuedKey } from '../src/keys/keyIssuer.js';
import type { Scope } from '../src/keys/scopes.js';
import { systemClock } from '../src/platform/clock.js';
import { createDatabasePool } from '../src/platform/db.js';
import { createLogger, type Logger } from '../src/platform/logger.js';
import { migrate } from '../src/platform/migrate.js';
import { sql } from '../src/platform/sql.js';
import { replayProjections } from '../src/projecting/replay.js';

/**
 * What the projection benches share: a Postgres database of their own (dropped at the end, on
 * failure, and on Ctrl-C), the seed history appended through the event store, and small helpers.
 */
export type BenchDatabase = {
  readonly name: string;
  readonly connectionUri: string;
  /** Drops the database (WITH FORCE: open connections are cut). Idempotent. */
  drop(): Promise<void>;
};

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `supply_bench_${randomBytes(5).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const admin = await createDatabasePool(adminUrl, 1);
  try {
    await admin.query(sql.typeAlias('void')`CREATE DATABASE ${sql.identifier([name])}`);
  } catch (error) {
    await admin.end();
    throw error;
  }

  let dropping: Promise<void> | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    note(`${signal}: dropping database ${name}`);
    void drop()
      .catch((error: unknown) => note(`could not drop ${name}: ${String(error)}`))
      .finally(() => process.exit(130));
  };
  const drop = (): Promise<void> =>
    (dropping ??= (async () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      try {
        await admin.query(sql.typeAlias('void')`DROP DATABASE IF EXISTS ${sql.identifier([name])} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    })());
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return { name, connectionUri: url.toString(), drop };
}

/** Appends the deterministic seed history through the event store, with a progress bar (setup, not measured). */
export async function seedBenchHistory(
  eventStore: EventStore,
  params: HistoryParams,
): Promise<{ readonly summary: SeedSummary; readonly events: number; readonly seconds: number }> {
  const bar = createProgressBar('seed', 'events', true);
  let events = 0;
  const started = performance.now();
  bar.start(0);
  try {
    const summary = await seed({
      eventStore,
      params,
      progress: ({ written, total }) => {
        events = written;
        bar.update(written, total);
      },
    });
    return { summary, events, seconds: (performance.now() - started) / 1000 };
  } finally {
    bar.stop();
  }
}

/** A pool of 4 and the Postgres event store on the bench database (setup work; close() ends both). */
export async function openBenchStore(database: BenchDatabase): Promise<{
  readonly pool: DatabasePool;
  readonly store: EventStore;
  readonly logger: Logger;
  close(): Promise<void>;
}> {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const { connectionUri } = database;
  const pool = await createDatabasePool(connectionUri, 4);
  const store = createPostgresEventStore({ pool, kind: 'postgres', logger, connectionUri });
  return {
    pool,
    store,
    logger,
    close: async () => {
      await store.close();
      await pool.end();
    },
  };
}

/**
 * Setup, not measured: migrates the bench database, appends the seed history, rebuilds every
 * projection to the head of the log (replayProjections, with a progress bar) and runs VACUUM
 * ANALYZE, printing what it does and how long it took on stderr.
 */
export async function seedAndProject(
  database: BenchDatabase,
  { pool, store, logger }: { readonly pool: DatabasePool; readonly store: EventStore; readonly logger: Logger },
  params: HistoryParams,
): Promise<{ readonly summary: SeedSummary; readonly events: number; readonly seedSeconds: number; readonly projectSeconds: number }> {
  await migrate(pool, logger);
  note(`database ${database.name}: seed ${params.seed}, ${params.tenants} tenants, ${params.days} days, ${params.scale}`);
  const seeded = await seedBenchHistory(store, params);
  note(`seed: ${seeded.events} events in ${seeded.seconds.toFixed(1)} s (setup, not measured)`);
  const started = performance.now();
  const bar = createProgressBar('replay', 'events', true);
  bar.start(0);
  try {
    await replayProjections({ pool, eventStore: store, projections: allProjections, logger, onProgress: ({ seen, total }) => bar.update(seen, total) });
  } finally {
    bar.stop();
  }
  await pool.query(sql.typeAlias('void')`VACUUM ANALYZE`);
  const projectSeconds = (performance.now() - started) / 1000;
  note(`projected to the head (${allProjections.length} projections) and VACUUM ANALYZE in ${projectSeconds.toFixed(1)} s (setup, not measured)`);
  return { summary: seeded.summary, events: seeded.events, seedSeconds: seeded.seconds, projectSeconds };
}

/** An API key for the tenant's owner (its first member) holding `scopes`. */
export async function issueBenchKey(
  { pool, store }: { readonly pool: DatabasePool; readonly store: EventStore },
  tenant: TenantSummary,
  scopes: readonly Scope[],
): Promise<IssuedKey> {
  const memberId = tenant.memberIds[0];
  if (memberId === undefined) throw new Error(`tenant ${tenant.workspaceId} has no owner`);
  return issueKey(
    { pool, clock: systemClock, checkRequester: (w, m) => checkKeyRequester(store, w, m) },
    { workspaceId: tenant.workspaceId, memberId, scopes, name: 'bench' },
  );
}

// ---------------------------------------------------------------------------------------------
// Child processes.

/** A server the bench started as a child process (the API, a baseline). */
export type Child = {
  readonly name: string;
  readonly process: ChildProcess;
  readonly baseUrl: string;
  readonly exited: Promise<number | null>;
  stderrTail(): string;
};

/** Lines of a child's stderr passed on to ours. */
const forwardedLines = 20;

/** Environment settings that would change what the API child connects to; the bench sets its own. */
/** Settings of the bench's own environment a child process must not inherit: it gets the bench's own. */
export const inheritedButNotWanted = ['REDIS_URL', 'EVENTSTORE_URL', 'PORT', 'DATABASE_URL', 'SIGNING_SECRET', 'PUBLIC_BASE_URL'];

/** Spawns `node ARGV --port P` on `port` (a free one by default) and waits until it answers /healthz; it joins `children`. */
export async function startChild(
  children: Set<Child>,
  name: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cpuProfDir?: string,
  port?: number,
): Promise<Child> {
  port ??= await freePort();
  const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !inheritedButNotWanted.includes(key)));
  const nodeFlags = cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
  const child = spawn(process.execPath, [...nodeFlags, ...argv, '--port', String(port)], {
    env: { ...baseEnv, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const tail: string[] = [];
  let partial = '';
  let lineCount = 0;
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      lineCount += 1;
      // The first lines go through; a flood (say, an error per request) is only counted.
      if (lineCount <= forwardedLines) note(`[${name}] ${line}`);
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      if (lineCount > forwardedLines) note(`[${name}] … ${lineCount - forwardedLines} more lines on stderr not shown`);
      resolve(code);
    }),
  );
  const started: Child = { name, process: child, baseUrl: `http://127.0.0.1:${port}`, exited, stderrTail: () => tail.join('\n') };
  children.add(started);
  await waitForHealth(started, 60_000);
  return started;
}

async function waitForHealth(child: Child, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void child.exited.then((code) => {
    exitCode = code;
  });
  while (performance.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`${child.name} exited (code ${exitCode}) before answering /healthz:\n${child.stderrTail()}`);
    try {
      const response = await fetch(`${child.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${child.name} did not answer /healthz within ${timeoutMs} ms:\n${child.stderrTail()}`);
}

/** SIGTERM (graceful: a --cpu-prof profile is written on exit), SIGKILL after 15 s. */
export async function stopChild(children: Set<Child>, child: Child): Promise<void> {
  if (!children.delete(child)) return;
  if (child.process.exitCode === null && child.process.signalCode === null) {
    child.process.kill('SIGTERM');
    const killed = setTimeout(() => child.process.kill('SIGKILL'), 15_000);
    await child.exited;
    clearTimeout(killed);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}


export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function positiveInteger(option: string, value: string | undefined): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${option} must be a positive integer, got ${value}`);
  return parsed;
}

export function wholeNumber(option: string, value: string | undefined): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${option} must be a whole number, got ${value}`);
  return parsed;
}

export function oneOf<const T extends readonly string[]>(option: string, value: string | undefined, choices: T): T[number] {
  const found = choices.find((choice) => choice === value);
  if (found === undefined) throw new Error(`--${option} must be one of ${choices.join(', ')}, got ${value}`);
  return found;
}

/** A UTC day start given as YYYY-MM-DD. */
export function utcDay(option: string, value: string | undefined): string {
  const day = value ?? '';
  const date = new Date(`${day}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== day) {
    throw new Error(`--${option} must be a UTC date such as 2026-01-05, got ${value}`);
  }
  return date.toISOString();
}

export function megabytes(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

/** Nearest-rank percentile of ascending-sorted values (0 for none). */
export function percentile(sorted: Float64Array | readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(fraction * sorted.length)));
  return sorted[rank - 1] ?? 0;
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/**
 * The parseArgs options of a seeded history that historyParamsOf reads, with the bench's default
 * scale; the as-of day is fixed by default so that every run seeds the same history.
 */
export function historyOptions(scale: HistoryScale) {
  return {
    scale: { type: 'string', default: scale },
    tenants: { type: 'string', default: String(historyDefaults.tenants) },
    days: { type: 'string', default: String(historyDefaults.days) },
    seed: { type: 'string', default: '7' },
    'as-of': { type: 'string', default: '2026-01-05' },
  } as const;
}

/** The history options every seeding bench takes (`--seed --tenants --days --scale --as-of`); `fixed` ones are not read. */
export function historyParamsOf(
  values: { readonly seed?: string; readonly tenants?: string; readonly days?: string; readonly scale?: string; readonly 'as-of'?: string },
  fixed: Partial<Pick<HistoryParams, 'scale' | 'asOf'>> = {},
): HistoryParams {
  return {
    seed: wholeNumber('seed', values.seed),
    tenants: positiveInteger('tenants', values.tenants),
    days: positiveInteger('days', values.days),
    scale: fixed.scale ?? oneOf('scale', values.scale, historyScales),
    asOf: fixed.asOf ?? utcDay('as-of', values['as-of']),
  };
}

/** Linux USER_HZ: /proc CPU times are in 1/100 s on every mainstream kernel build. */
export const clockTicksPerSecond = 100;

/** The fields of /proc/PID/stat after "pid (comm) ": state is [0], utime [11], stime [12], cutime [13], cstime [14]. */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a live process (all its threads), in seconds. */
export async function processCpuSeconds(pid: number): Promise<number> {
  const fields = statFields(await readFile(`/proc/${pid}/stat`, 'utf8'));
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
}

/** Resident set size of a live process, in bytes. */
export async function processRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  return kb === undefined ? 0 : Number(kb) * 1024;
}
