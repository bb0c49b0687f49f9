import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { allProjections } from '../projections/index.js';
import { createProgressBar } from '../src/cli/progressBar.js';
import { generateHistory } from '../src/console/history/generateHistory.js';
import { historyDefaults, type HistoryParams } from '../src/console/history/historyParams.js';
import type { StreamWrite } from '../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../src/eventStore/postgresEventStore.js';
import { createDatabasePool } from '../src/platform/db.js';
import { createLogger } from '../src/platform/logger.js';
import { migrate } from '../src/platform/migrate.js';
import { sql } from '../src/platform/sql.js';
import { readModelSchema } from '../src/projecting/generations.js';
import { defaultReplayParallelism, replayProjections } from '../src/projecting/replay.js';
import { createBenchDatabase, megabytes, note, positiveInteger, round, seedBenchHistory, historyParamsOf } from './benchSupport.js';
import { copyChunks, renderCopyChunk, type CopyChunk } from './copyBaseline.js';
import type { BenchResult } from './run.js';

/**
 * Full rebuild of every registered read model (`allProjections`) from the seed history, on real
 * Postgres in a database of its own that is dropped at the end, at two lengths of the log:
 *
 *   npm run bench -- replay [--scale small|medium|large] [--tenants 2] [--days 90] [--seed 7]
 *                           [--batch 5000] [--parallel N] [--strict] [--single] [--as-of 2026-01-05]
 *
 * Setup (not measured): migrate, append the seed history through the Postgres event store, then
 * VACUUM ANALYZE (what autovacuum does after a bulk load; a replay in production reads a settled
 * log). Measured: one replayProjections over the whole log (events/s, wall seconds, RSS sampled
 * every 100 ms from the start of the replay to its end), then the rows the read tables hold. Then
 * a second history of the same size (seed + 1, other tenants) is appended and the doubled log is
 * replayed the same way (a rebuild over live tables): its peak RSS shows whether memory grows
 * with the log (`--single` skips it). The floor: COPY as many rows as the first log has events
 * (the same seed history, rendered to COPY text beforehand so that only the COPY is timed) into a
 * plain table; ratio = replay events/s of the first log ÷ COPY rows/s, `ratio2x` the same for the
 * doubled log.
 */
export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      scale: { type: 'string', default: 'large' },
      tenants: { type: 'string', default: String(historyDefaults.tenants) },
      days: { type: 'string', default: String(historyDefaults.days) },
      seed: { type: 'string', default: '7' },
      batch: { type: 'string', default: '5000' },
      // Side-by-side projections; the pool below has 4 connections.
      parallel: { type: 'string', default: String(Math.min(3, defaultReplayParallelism(availableParallelism()))) },
      strict: { type: 'boolean', default: false },
      single: { type: 'boolean', default: false },
      // Fixed by default so that every run replays the same history.
      'as-of': { type: 'string', default: '2026-01-05' },
    },
  });
  const params = historyParamsOf(values);
  const batchSize = positiveInteger('batch', values.batch);
  const parallelism = positiveInteger('parallel', values.parallel);
  if (parallelism > 3) throw new Error('--parallel must be at most 3 (the pool has 4 connections)');
  const strict = values.strict;
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
  if (allProjections.length === 0) throw new Error('no projection is registered in projections/index.ts');

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
      const replayOnce = async (label: string) => {
        const seeded = await seedBenchHistory(store, label === '1x' ? params : { ...params, seed: Number(params.seed) + 1 });
        note(`seed ${label}: ${seeded.events} events in ${seeded.seconds.toFixed(1)} s (setup, not measured)`);
        await pool.query(sql.typeAlias('void')`VACUUM ANALYZE`);
        const replay = await measuredReplay(async (onProgress) =>
          replayProjections({ pool, eventStore: store, projections: allProjections, logger, batchSize, onProgress, strict, parallelism, bulkLoad: { connectionUri } }),
        );
        const loadAvg1m = round(loadavg()[0] ?? 0, 2);
        const logEvents = Number((await store.head()).eventCount);
        if (replay.events !== logEvents) throw new Error(`replayed ${replay.events} events, the log holds ${logEvents}`);
        note(`replay ${label}: ${replay.events} events in ${replay.seconds.toFixed(2)} s = ${Math.round(replay.events / replay.seconds)} events/s`);
        note(`node cpu: ${replay.cpuSeconds.toFixed(1)} s of ${replay.seconds.toFixed(1)} s wall`);
        note(`rss: ${megabytes(replay.rssStart)} MB at start, ${megabytes(replay.rssPeak)} MB peak, ${megabytes(replay.rssEnd)} MB at end`);
        const tables = await readTableRows(pool);
        for (const table of tables) note(`  ${table.projection}.${table.table}: ${table.rows} rows`);
        return { replay, loadAvg1m, rowsWritten: tables.reduce((sum, table) => sum + table.rows, 0) };
      };

      const first = await replayOnce('1x');
      const second = values.single ? undefined : await replayOnce('2x');

      const copy = await copyFloor(pool, connectionUri, params, first.replay.events);
      if (copy.rows !== first.replay.events) throw new Error(`COPY wrote ${copy.rows} rows for ${first.replay.events} events`);
      note(`COPY: ${copy.rows} rows in ${copy.seconds.toFixed(2)} s = ${Math.round(copy.rows / copy.seconds)} rows/s`);

      const copyRowsPerSec = Math.round(copy.rows / copy.seconds);
      const figuresOf = ({ replay, loadAvg1m, rowsWritten }: Awaited<ReturnType<typeof replayOnce>>) => ({
        eventsPerSec: Math.round(replay.events / replay.seconds),
        seconds: round(replay.seconds, 2),
        events: replay.events,
        rowsWritten,
        rssStartMb: megabytes(replay.rssStart),
        rssPeakMb: megabytes(replay.rssPeak),
        rssEndMb: megabytes(replay.rssEnd),
        // CPU time of this Node process during the replay over its wall time (1 = one core busy
        // throughout): the rest of the wall time is spent waiting on Postgres.
        nodeCpuShare: round(replay.cpuSeconds / replay.seconds, 2),
        // The machine's 1-minute load average as the replay ended (other work on the cores).
        loadAvg1m,
      });
      const once = figuresOf(first);
      const twice = second === undefined ? undefined : figuresOf(second);
      const ratio = round(once.eventsPerSec / copyRowsPerSec, 3);
      const ratio2x = twice === undefined ? undefined : round(twice.eventsPerSec / copyRowsPerSec, 3);
      const rssPeakGrowth = twice === undefined ? undefined : round(twice.rssPeakMb / once.rssPeakMb, 3);
      const target = { eventsPerSec: 50_000, ratioToCopy: 0.35, rssPeakGrowth2x: 1.1 };
      return {
        bench: 'replay',
        figures: {
          ...once,
          copyRowsPerSec,
          copySeconds: round(copy.seconds, 2),
          projections: allProjections.length,
          batch: batchSize,
          parallel: parallelism,
          ...(twice === undefined || ratio2x === undefined || rssPeakGrowth === undefined ? {} : { log2x: { ...twice, ratio: ratio2x }, rssPeakGrowth2x: rssPeakGrowth }),
        },
        ratio,
        target,
        pass: {
          eventsPerSec: once.eventsPerSec >= target.eventsPerSec && (twice === undefined || twice.eventsPerSec >= target.eventsPerSec),
          ratioToCopy: ratio >= target.ratioToCopy && (ratio2x === undefined || ratio2x >= target.ratioToCopy),
          ...(rssPeakGrowth === undefined ? {} : { rssPeakGrowth2x: rssPeakGrowth <= target.rssPeakGrowth2x }),
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

type Replayed = { events: number; seconds: number; rssStart: number; rssPeak: number; rssEnd: number; cpuSeconds: number };

/** Times the replay with a progress bar and samples the RSS every 100 ms while it runs. */
async function measuredReplay(
  replay: (onProgress: (progress: { seen: number; total: number }) => void) => Promise<{ events: number }>,
): Promise<Replayed> {
  const bar = createProgressBar('replay', 'events', true);
  const rssStart = process.memoryUsage().rss;
  let rssPeak = rssStart;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 100);
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  bar.start(0);
  try {
    const result = await replay(({ seen, total }) => bar.update(seen, total));
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    const rssEnd = process.memoryUsage().rss;
    return { events: result.events, seconds, rssStart, rssPeak: Math.max(rssPeak, rssEnd), rssEnd, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
  } finally {
    clearInterval(sampler);
    bar.stop();
  }
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
 * The COPY floor: the seed history generated again (it is deterministic) and rendered to COPY text
 * in memory first, untimed; then only the COPY of those chunks is timed. Runs after the replay,
 * so the chunks held in memory do not show in the replay's RSS.
 */
async function copyFloor(
  pool: DatabasePool,
  connectionUri: string,
  params: HistoryParams,
  events: number,
): Promise<{ rows: number; seconds: number }> {
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

  const bar = phaseBar('COPY', events);
  try {
    return await copyChunks({ pool, connectionUri, chunks: () => chunks, onRows: (rows) => bar.update(rows) });
  } finally {
    bar.stop();
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
