import { execFileSync, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { allProjections } from '../projections/index.js';
import { generateHistory } from '../src/console/history/generateHistory.js';
import type { HistoryParams } from '../src/console/history/historyParams.js';
import type { StreamWrite } from '../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../src/eventStore/postgresEventStore.js';
import { createDatabasePool } from '../src/platform/db.js';
import { createLogger } from '../src/platform/logger.js';
import { migrate } from '../src/platform/migrate.js';
import { sql } from '../src/platform/sql.js';
import { readModelSchema } from '../src/projecting/generations.js';
import { defaultReplayParallelism } from '../src/projecting/replay.js';
import {
  createBenchDatabase,
  historyOptions,
  historyParamsOf,
  inheritedButNotWanted,
  megabytes,
  note,
  positiveInteger,
  processCpuSeconds,
  processRss,
  round,
  seedBenchHistory,
} from './benchSupport.js';
import { processesEnded, processTree } from '../test/support/cli.js';
import { copyChunks, renderCopyChunk, type CopyChunk } from './copyBaseline.js';
import type { BenchResult } from './run.js';

/**
 * Full rebuild of every registered read model (`allProjections`) from the seed history, on real
 * Postgres in a database of its own that is dropped at the end, at two lengths of the log:
 *
 *   npm run bench -- replay [--scale small|medium|large] [--tenants 2] [--days 90] [--seed 7]
 *                           [--batch 5000] [--parallel N] [--strict] [--single] [--as-of 2026-01-05]
 *
 * Setup (not measured): compile dist/ (bin/build.js, as `npm install` does), migrate, append the
 * seed history through the Postgres event store, then VACUUM ANALYZE (what autovacuum does after a
 * bulk load; a replay in production reads a settled log) and CHECKPOINT (the seed's writes on disk
 * before the timing starts). Measured: the command operators run,
 * `supply-api projections replay`, in a child process of its own (commandReplay: events/s from
 * the replay's own seconds; the command's RSS at start, peak and end and its CPU, and Postgres's
 * CPU, from /proc every 100 ms), then the rows the read tables hold. Then the log is made twice
 * and four times as long (the seed's tenants copied as new ones, growLog) and each is replayed the
 * same way (a rebuild over live tables): whether memory and the cost per event grow with the log
 * (`--single` skips them). The floor of each log, timed right after its replay: COPY as many rows
 * as it has events (the seed history, rendered to COPY text beforehand so that only the COPY is
 * timed, after a CHECKPOINT as each replay) into a plain table; ratio = replay events/s ÷ COPY
 * rows/s of the same log. After the first log's rebuild it is started again,
 * SIGKILLed once it has built 80 % of the log (killReplayAt) and run again, which resumes it:
 * `resumeShare` = the second run's seconds ÷ the uninterrupted rebuild's.
 */
export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      ...historyOptions('large'),
      batch: { type: 'string', default: '5000' },
      // Side-by-side projections (the command's pool has 10 connections).
      parallel: { type: 'string', default: String(Math.min(3, defaultReplayParallelism(availableParallelism()))) },
      strict: { type: 'boolean', default: false },
      single: { type: 'boolean', default: false },
    },
  });
  const params = historyParamsOf(values);
  const batchSize = positiveInteger('batch', values.batch);
  const parallelism = positiveInteger('parallel', values.parallel);
  if (parallelism > 8) throw new Error('--parallel must be at most 8 (the command\'s pool has 10 connections)');
  const strict = values.strict;
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
  if (allProjections.length === 0) throw new Error('no projection is registered in projections/index.ts');

  execFileSync(process.execPath, ['bin/build.js'], { stdio: 'inherit' });
  const database = await createBenchDatabase();
  try {
    const { connectionUri } = database;
    const pool = await createDatabasePool(connectionUri, 4);
    const store = createPostgresEventStore({ pool, kind: 'postgres', logger, connectionUri });
    try {
      await migrate(pool, logger);
      note(
        `database ${database.name}: seed ${params.seed}, ${params.tenants} tenants, ${params.days} days, ${params.scale}; ` +
          `projections ${allProjections.map((p) => p.name).join(', ')}; batches of ${batchSize}; ${parallelism} side by side; ` +
          `${strict ? 'strict' : 'trusted'} decoding`,
      );
      // The seed history rendered as COPY text once (setup): each log's floor COPYs it once per 1x.
      let chunks: CopyChunk[] = [];
      const replayOnce = async (label: string, copies: number, times: number) => {
        if (copies === 0) {
          const seeded = await seedBenchHistory(store, params);
          note(`seed ${label}: ${seeded.events} events in ${seeded.seconds.toFixed(1)} s (setup, not measured)`);
          chunks = await renderedHistory(params, seeded.events);
        } else {
          const grown = await growLog(pool, copies);
          note(`log ${label}: ${grown.events} events copied in ${grown.seconds.toFixed(1)} s (setup, not measured)`);
        }
        await pool.query(sql.typeAlias('void')`VACUUM ANALYZE`);
        // The seed's dirty pages written out now, not by a checkpoint that runs during the replay.
        await pool.query(sql.typeAlias('void')`CHECKPOINT`);
        const replay = await commandReplay({ connectionUri, database: database.name, batchSize, parallelism, strict });
        const loadAvg1m = round(loadavg()[0] ?? 0, 2);
        const logEvents = Number((await store.head()).eventCount);
        if (replay.events !== logEvents) throw new Error(`replayed ${replay.events} events, the log holds ${logEvents}`);
        note(`replay ${label}: ${replay.events} events in ${replay.seconds.toFixed(2)} s = ${Math.round(replay.events / replay.seconds)} events/s (load ${loadAvg1m})`);
        note(`cpu: the command ${replay.cpuSeconds.toFixed(1)} s, Postgres (this database's backends) ${replay.postgresCpuSeconds.toFixed(1)} s, in ${replay.seconds.toFixed(1)} s wall`);
        note(`rss: ${megabytes(replay.rssStart)} MB at start, ${megabytes(replay.rssPeak)} MB peak, ${megabytes(replay.rssEnd)} MB at end`);
        const tables = await readTableRows(pool);
        for (const table of tables) note(`  ${table.projection}.${table.table}: ${table.rows} rows`);
        // The floor right after the replay: the machine's speed drifts over minutes (its CPU seconds
        // for the same rebuild by a third within a quarter of an hour), and both must see the same one.
        const floor = await copyFloor(pool, connectionUri, chunks, times);
        if (floor.rows !== replay.events) throw new Error(`COPY wrote ${floor.rows} rows for ${replay.events} events`);
        note(`COPY ${label}: ${floor.rows} rows in ${floor.seconds.toFixed(2)} s = ${Math.round(floor.rows / floor.seconds)} rows/s`);
        return { replay, loadAvg1m, rowsWritten: tables.reduce((sum, table) => sum + table.rows, 0), floor };
      };

      const first = await replayOnce('1x', 0, 1);
      // The rebuild of the same log killed (SIGKILL) once it has built 80 % of it, then run again:
      // the second run resumes from the last batch each projection committed.
      const killed = await killReplayAt(pool, { connectionUri, batchSize, parallelism, strict }, 0.8, first.replay.events);
      note(`killed at ${killed.seenAtKill} of ${first.replay.events} events (${killed.seconds.toFixed(2)} s after the start)`);
      const resumed = await commandReplay({ connectionUri, database: database.name, batchSize, parallelism, strict });
      const resumeShare = round(resumed.seconds / first.replay.seconds, 3);
      note(`resumed: ${resumed.seconds.toFixed(2)} s = ${resumeShare} of the uninterrupted rebuild's ${first.replay.seconds.toFixed(2)} s`);
      if (resumed.events !== first.replay.events) throw new Error(`the resumed rebuild covers ${resumed.events} events, the log holds ${first.replay.events}`);
      // The 2x log: the 1x one and a copy of its tenants; the 4x log: two more copies.
      const second = values.single ? undefined : await replayOnce('2x', 1, 2);
      const fourth = values.single ? undefined : await replayOnce('4x', 2, 4);
      const copy = first.floor;

      const copyRowsPerSec = Math.round(copy.rows / copy.seconds);
      const figuresOf = ({ replay, loadAvg1m, rowsWritten }: Awaited<ReturnType<typeof replayOnce>>) => ({
        eventsPerSec: Math.round(replay.events / replay.seconds),
        seconds: round(replay.seconds, 2),
        events: replay.events,
        rowsWritten,
        rssStartMb: megabytes(replay.rssStart),
        rssPeakMb: megabytes(replay.rssPeak),
        rssEndMb: megabytes(replay.rssEnd),
        // CPU time of the command's process over the replay's wall time (1 = one core busy
        // throughout): the rest of the wall time it spent waiting on Postgres.
        nodeCpuShare: round(replay.cpuSeconds / replay.seconds, 2),
        // CPU seconds of the command's process (with its start) and of the Postgres server, per
        // million events: the cost of the rebuild whatever the machine's cores did meanwhile.
        nodeCpuSecondsPerMillion: round((replay.cpuSeconds * 1e6) / replay.events, 2),
        postgresCpuSecondsPerMillion: round((replay.postgresCpuSeconds * 1e6) / replay.events, 2),
        // The machine's 1-minute load average as the replay ended (other work on the cores).
        loadAvg1m,
      });
      const once = figuresOf(first);
      const ratio = round(once.eventsPerSec / copyRowsPerSec, 3);
      const grownFigures = (replayed: Awaited<ReturnType<typeof replayOnce>> | undefined) =>
        replayed === undefined ? undefined : { ...figuresOf(replayed), ratio: round(figuresOf(replayed).eventsPerSec / (replayed.floor.rows / replayed.floor.seconds), 3) };
      const twice = grownFigures(second);
      const four = grownFigures(fourth);
      const rssPeakGrowth = twice === undefined ? undefined : round(twice.rssPeakMb / once.rssPeakMb, 3);
      const rssPeakGrowth4x = four === undefined ? undefined : round(four.rssPeakMb / once.rssPeakMb, 3);
      // CPU per million events of the 4x log over the 1x log's: 1 when the cost per event stays flat.
      const nodeCpuGrowth4x = four === undefined ? undefined : round(four.nodeCpuSecondsPerMillion / once.nodeCpuSecondsPerMillion, 3);
      const postgresCpuGrowth4x = four === undefined ? undefined : round(four.postgresCpuSecondsPerMillion / once.postgresCpuSecondsPerMillion, 3);
      const target = { eventsPerSec: 50_000, ratioToCopy: 0.5, rssPeakGrowth2x: 1.1, rssPeakGrowth4x: 1.1, cpuGrowth4x: 1.1, resumeShare: 0.35 };
      const ratios = [ratio, twice?.ratio, four?.ratio].filter((r) => r !== undefined);
      return {
        bench: 'replay',
        figures: {
          ...once,
          copyRowsPerSec,
          copySeconds: round(copy.seconds, 2),
          // The rebuild killed at 80 % and run again: the second run's seconds over an uninterrupted one's.
          resumeShare,
          resumeSeconds: round(resumed.seconds, 2),
          killedAtEvents: killed.seenAtKill,
          projections: allProjections.length,
          batch: batchSize,
          parallel: parallelism,
          ...(twice === undefined || rssPeakGrowth === undefined ? {} : { log2x: twice, rssPeakGrowth2x: rssPeakGrowth }),
          ...(four === undefined || rssPeakGrowth4x === undefined || nodeCpuGrowth4x === undefined || postgresCpuGrowth4x === undefined
            ? {}
            : { log4x: four, rssPeakGrowth4x, nodeCpuGrowth4x, postgresCpuGrowth4x }),
        },
        ratio,
        target,
        pass: {
          eventsPerSec: [once, twice, four].every((f) => f === undefined || f.eventsPerSec >= target.eventsPerSec),
          ratioToCopy: ratios.every((r) => r >= target.ratioToCopy),
          ...(rssPeakGrowth === undefined ? {} : { rssPeakGrowth2x: rssPeakGrowth <= target.rssPeakGrowth2x }),
          ...(rssPeakGrowth4x === undefined ? {} : { rssPeakGrowth4x: rssPeakGrowth4x <= target.rssPeakGrowth4x }),
          ...(nodeCpuGrowth4x === undefined || postgresCpuGrowth4x === undefined
            ? {}
            : { cpuGrowth4x: nodeCpuGrowth4x <= target.cpuGrowth4x && postgresCpuGrowth4x <= target.cpuGrowth4x }),
          resumeShare: resumeShare <= target.resumeShare,
        },
      };
    } finally {
      await store.close();
      await pool.end();
    }
  } finally {
    await database.drop();
  }
}

type Replayed = { events: number; seconds: number; rssStart: number; rssPeak: number; rssEnd: number; cpuSeconds: number; postgresCpuSeconds: number };

/**
 * Runs the rebuild as operators do, `supply-api projections replay`, in a child process of its
 * own (compiled dist/), so that its RSS and CPU are the command's alone and not what this process
 * kept from seeding or from the previous replay. Its progress bar goes to this process's stderr;
 * its stdout is the ReplayResult, whose `seconds` (the replay itself, without the process start)
 * gives events/s. Sampled every 100 ms from /proc: the child's RSS (start: when it first writes to
 * stderr, which the replay's progress bar does as it begins; peak; end: the last sample before it
 * exits) and CPU (user + system, the last sample, including the process start); and the CPU of
 * every Postgres process of the server, with the backends that exited (a postmaster's reaped
 * children) counted through its cutime/cstime.
 */
export async function commandReplay(options: {
  readonly connectionUri: string;
  /** The bench database: the Postgres CPU counted is that of the backends serving it. */
  readonly database: string;
  readonly batchSize: number;
  readonly parallelism: number;
  readonly strict: boolean;
}): Promise<Replayed> {
  const args = ['bin/supply-api.js', 'projections', 'replay', '--batch', String(options.batchSize), '--parallel', String(options.parallelism)];
  if (options.strict) args.push('--strict');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !inheritedButNotWanted.includes(key)));
  const postgres = new DatabaseCpu(options.database);
  await postgres.sample();
  const child = spawn(process.execPath, args, {
    env: { ...env, DATABASE_URL: options.connectionUri, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start supply-api projections replay');
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
  });
  let rssStart: number | undefined;
  let rssPeak = 0;
  let rssEnd = 0;
  let cpuSeconds = 0;
  const sample = async (): Promise<void> => {
    const reading = await readProcess(pid).catch(() => undefined);
    if (reading === undefined) return;
    rssPeak = Math.max(rssPeak, reading.rss);
    rssEnd = reading.rss;
    cpuSeconds = Math.max(cpuSeconds, reading.cpuSeconds);
    await postgres.sample();
  };
  child.stderr.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    if (rssStart === undefined) {
      rssStart = 0;
      void readProcess(pid)
        .then((reading) => {
          rssStart = reading.rss;
        })
        .catch(() => undefined);
    }
  });
  const sampler = setInterval(() => void sample(), 100);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (exitCode) => resolve(exitCode));
  });
  clearInterval(sampler);
  await postgres.sample();
  const postgresCpu = postgres.seconds();
  if (code !== 0) throw new Error(`supply-api projections replay exited with code ${String(code)}`);
  const result = z.object({ events: z.number(), seconds: z.number() }).parse(JSON.parse(stdout));
  return {
    events: result.events,
    seconds: result.seconds,
    rssStart: rssStart ?? 0,
    rssPeak,
    rssEnd,
    cpuSeconds,
    postgresCpuSeconds: postgresCpu,
  };
}

/**
 * Starts `supply-api projections replay` as commandReplay does and SIGKILLs it once every
 * generation it builds that has committed a write has seen `share` of the log's `events` (read
 * from projection_generations every 20 ms; a generation that has not committed yet does not count).
 */
async function killReplayAt(
  pool: DatabasePool,
  options: { readonly connectionUri: string; readonly batchSize: number; readonly parallelism: number; readonly strict: boolean },
  share: number,
  events: number,
): Promise<{ seenAtKill: number; seconds: number }> {
  const args = ['bin/supply-api.js', 'projections', 'replay', '--batch', String(options.batchSize), '--parallel', String(options.parallelism)];
  if (options.strict) args.push('--strict');
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !inheritedButNotWanted.includes(key)));
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...env, DATABASE_URL: options.connectionUri, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
  const seenRow = z.object({ seen: z.bigint().nullable() });
  for (;;) {
    const seen = await pool.oneFirst(sql.type(seenRow)`
      SELECT min(events_seen) AS seen FROM projection_generations WHERE state = 'building' AND events_seen > 0
    `);
    if (seen !== null && Number(seen) >= share * events) {
      const tree = processTree(child.pid ?? Number.NaN);
      child.kill('SIGKILL');
      await exited;
      // The command's replay process dies with it a moment later (bin/replayHeap.js); until then it holds the replay's locks.
      await processesEnded(tree);
      return { seenAtKill: Number(seen), seconds: (performance.now() - started) / 1000 };
    }
    if (child.exitCode !== null) throw new Error(`the replay to be killed ended first (code ${String(child.exitCode)})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * RSS (bytes) and user + system CPU (seconds) of a live command: its process and their children
 * (the replay runs in a child of the command's process, bin/replayHeap.js: both count, as both
 * are what an operator's command holds).
 */
async function readProcess(pid: number): Promise<{ rss: number; cpuSeconds: number }> {
  const readings = await Promise.all(
    processTree(pid).map(async (member) => {
      // A process that ended between the listing and the reading counts nothing.
      const [rss, cpuSeconds] = await Promise.all([processRss(member), processCpuSeconds(member)]).catch(() => [0, 0]);
      return { rss, cpuSeconds };
    }),
  );
  return readings.reduce((sum, reading) => ({ rss: sum.rss + reading.rss, cpuSeconds: sum.cpuSeconds + reading.cpuSeconds }), { rss: 0, cpuSeconds: 0 });
}

/**
 * CPU seconds of the Postgres processes serving one database, from /proc: the backends whose
 * process title names it (`postgres: … user database host(port) state`, autovacuum workers
 * included) and the parallel workers of those backends, each process's title read once (the
 * sampler runs beside the rebuild on the same cores: it reads as little as it can). Each sample
 * keeps every such process's user + system time; the figure is the growth since a process was first seen (a backend that
 * exits between two samples loses its last 100 ms at most). The other helpers' databases, and the
 * server's shared processes (checkpointer, WAL writer), do not count.
 */
class DatabaseCpu {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  /** Each process's title as first read (what a backend serves does not change): read once a process. */
  private readonly titles = new Map<number, string>();
  private sampled = false;

  constructor(private readonly database: string) {}

  async sample(): Promise<void> {
    const titles = new Map<number, string>();
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      let title = this.titles.get(pid);
      if (title === undefined) {
        title = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
        // A backend forked a moment ago still has the server's command line: read it again next time.
        if (title.startsWith('postgres: ') || !title.includes('postgres')) this.titles.set(pid, title);
      }
      if (title.startsWith('postgres: ')) titles.set(pid, title);
    }
    const ours = new Set<number>();
    for (const [pid, title] of titles) if (title.includes(` ${this.database} `)) ours.add(pid);
    for (const [pid, title] of titles) {
      const leader = /parallel worker for PID (\d+)/.exec(title)?.[1];
      if (leader !== undefined && ours.has(Number(leader))) ours.add(pid);
    }
    for (const pid of ours) {
      const seconds = await processCpuSeconds(pid).catch(() => undefined);
      if (seconds === undefined) continue;
      // A process there at the first sample counts from then; one that started later, from its start.
      if (!this.first.has(pid)) this.first.set(pid, this.sampled ? 0 : seconds);
      this.last.set(pid, seconds);
    }
    this.sampled = true;
  }

  seconds(): number {
    let total = 0;
    for (const [pid, seconds] of this.last) total += seconds - (this.first.get(pid) ?? 0);
    return total;
  }
}

/**
 * Makes the log `copies` times longer than the seed history: every tenant of the seed (those whose
 * id has no `~`) copied as a tenant of its own (`<id>~<n>`, in the stream names and wherever the
 * events' data names the tenant), its streams and events with new ids,
 * straight into the log table in log order (one INSERT … SELECT each, not through the console,
 * which would take longer than the rebuilds). The copies are the seed's events, so the rebuilds
 * of the longer logs do the same work per event.
 */
async function growLog(pool: DatabasePool, copies: number): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  const copied = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(DISTINCT tenant_id)::int AS n FROM streams WHERE tenant_id LIKE '%~%'`);
  const seedTenants = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(DISTINCT tenant_id)::int AS n FROM streams WHERE tenant_id NOT LIKE '%~%'`);
  const from = copied / Math.max(1, seedTenants) + 1;
  let events = 0;
  for (let copy = from; copy < from + copies; copy += 1) {
    const suffix = `~${copy}`;
    await pool.transaction(async (tx) => {
      // The tenant id sits right after the stream's category: `supply.box-<tenant>.<box>`.
      await tx.query(sql.typeAlias('void')`
        INSERT INTO streams (stream_name, tenant_id, revision)
        SELECT overlay(stream_name placing tenant_id || ${suffix} from position('-' IN stream_name) + 1 for length(tenant_id)), tenant_id || ${suffix}, revision
        FROM streams WHERE tenant_id NOT LIKE '%~%'
      `);
      const inserted = await tx.query(sql.typeAlias('void')`
        INSERT INTO events (stream_id, stream_name, stream_revision, tenant_id, event_id, event_type, schema_version, data, occurred_at, recorded_at)
        SELECT s.stream_id, s.stream_name, e.stream_revision, s.tenant_id, md5(e.event_id::text || ${suffix})::uuid, e.event_type, e.schema_version,
          replace(e.data::text, '"' || e.tenant_id || '"', '"' || s.tenant_id || '"')::jsonb, e.occurred_at, e.recorded_at
        FROM events AS e
        JOIN streams AS s ON s.stream_name = overlay(e.stream_name placing e.tenant_id || ${suffix} from position('-' IN e.stream_name) + 1 for length(e.tenant_id))
        WHERE e.tenant_id NOT LIKE '%~%'
        ORDER BY e.transaction_id, e.global_position
      `);
      events += inserted.rowCount;
    });
  }
  return { events, seconds: (performance.now() - started) / 1000 };
}

const rowCount = z.object({ rows: z.bigint() });

/** Rows of every read table, counted through the read_models views (the active generation). */
async function readTableRows(pool: DatabasePool) {
  const counts: { projection: string; table: string; rows: number }[] = [];
  for (const projection of allProjections) {
    for (const table of projection.tables) {
      const rows = await pool.oneFirst(sql.type(rowCount)`SELECT count(*) AS rows FROM ${sql.identifier([readModelSchema, table.name])}`);
      counts.push({ projection: projection.name, table: table.name, rows: Number(rows) });
    }
  }
  return counts;
}

/**
 * The seed history generated again (it is deterministic) and rendered to COPY text in memory,
 * untimed. Made after the replays, so the chunks held in memory do not show in the bench's own RSS
 * while they run.
 */
async function renderedHistory(params: HistoryParams, events: number): Promise<CopyChunk[]> {
  const chunks: CopyChunk[] = [];
  const prepare = phaseBar('prepare', events);
  let group: StreamWrite[] = [];
  let groupEvents = 0;
  let rendered = 0;
  for (const write of generateHistory(params)) {
    group.push(write);
    groupEvents += write.events.length;
    if (groupEvents >= 5000) {
      chunks.push(renderCopyChunk(group));
      rendered += groupEvents;
      prepare.update(rendered);
      group = [];
      groupEvents = 0;
    }
  }
  if (group.length > 0) chunks.push(renderCopyChunk(group));
  prepare.update(rendered + groupEvents);
  prepare.stop();
  return chunks;
}

/**
 * The COPY floor of a log `times` as long as the seed history: its rendered chunks COPYed `times`
 * over into a plain table (dropped afterwards), only the COPY timed.
 */
async function copyFloor(pool: DatabasePool, connectionUri: string, chunks: readonly CopyChunk[], times: number): Promise<{ rows: number; seconds: number }> {
  const events = chunks.reduce((sum, chunk) => sum + chunk.rows, 0) * times;
  // As before each replay: what the replays wrote is on disk before the COPY is timed.
  await pool.query(sql.typeAlias('void')`CHECKPOINT`);
  const bar = phaseBar('COPY', events);
  try {
    const repeated = function* () {
      for (let time = 0; time < times; time += 1) yield* chunks;
    };
    return await copyChunks({ pool, connectionUri, chunks: repeated, onRows: (rows) => bar.update(rows) });
  } finally {
    bar.stop();
    await pool.query(sql.typeAlias('void')`DROP TABLE IF EXISTS copy_baseline`);
  }
}

function phaseBar(phase: string, total: number): cliProgress.SingleBar {
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: `${phase.padEnd(8)} [{bar}] {value}/{total} {eta_formatted}`, etaBuffer: 50, noTTYOutput: true, notTTYSchedule: 3000 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return bar;
}
