import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { logStart, type LogPosition } from '../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../src/eventStore/postgresEventStore.js';
import { createDatabasePool } from '../src/platform/db.js';
import { createLogger } from '../src/platform/logger.js';
import { migrate } from '../src/platform/migrate.js';
import { sql } from '../src/platform/sql.js';
import { copyBaseline } from './copyBaseline.js';
import type { BenchResult } from './run.js';
import { assertCatalogueEvents, createSyntheticLog, type SyntheticLogOptions } from './syntheticLog.js';

/**
 * Event store throughput on real Postgres, in a database of its own that is dropped at the end:
 * append a synthetic stock history in batches (appendMany), read it all back twice, as one stream
 * (streamAll: COPY … TO STDOUT, what replays read with; `readEventsPerSec`) and page by page
 * (readAll: what catch-up and live subscriptions read with; `readAllEventsPerSec`), and COPY the
 * same rows into a plain table as the floor to compare with.
 *
 *   npm run bench -- eventstore [--events N] [--batch 100] [--streams 20000] [--streams-per-batch 10]
 *                               [--writers 4] [--read-batch 5000] [--seed 7]
 */
export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      events: { type: 'string', default: '1000000' },
      batch: { type: 'string', default: '100' },
      streams: { type: 'string', default: '20000' },
      'streams-per-batch': { type: 'string', default: '10' },
      writers: { type: 'string', default: '4' },
      'read-batch': { type: 'string', default: '5000' },
      seed: { type: 'string', default: '7' },
    },
  });
  const logOptions: SyntheticLogOptions = {
    events: positiveInteger('events', values.events),
    batchSize: positiveInteger('batch', values.batch),
    streams: positiveInteger('streams', values.streams),
    streamsPerBatch: positiveInteger('streams-per-batch', values['streams-per-batch']),
    writers: positiveInteger('writers', values.writers),
    seed: positiveInteger('seed', values.seed),
  };
  const readBatch = positiveInteger('read-batch', values['read-batch']);
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `supply_bench_${randomBytes(5).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const connectionUri = url.toString();

  const admin = await createDatabasePool(adminUrl, 1);
  await admin.query(sql.typeAlias('void')`CREATE DATABASE ${sql.identifier([name])}`);
  const pool = await createDatabasePool(connectionUri, logOptions.writers + 2);
  const store = createPostgresEventStore({ pool, kind: 'postgres', logger, connectionUri });
  try {
    await migrate(pool, logger);
    note(`database ${name}: ${logOptions.events} events, batches of ${logOptions.batchSize}, ${logOptions.writers} writers`);

    const log = createSyntheticLog(logOptions);
    const append = await timed('append', logOptions.events, async (progress) => {
      let appended = 0;
      const writer = async (index: number) => {
        for (let batch = index; batch < log.batchCount; batch += logOptions.writers) {
          const writes = log.batch(batch);
          if (batch === 0) assertCatalogueEvents(writes);
          await store.appendMany(writes);
          appended += writes.reduce((sum, write) => sum + write.events.length, 0);
          progress(appended);
        }
      };
      await Promise.all(Array.from({ length: logOptions.writers }, (_, index) => writer(index)));
      return appended;
    });

    // What autovacuum would do in the background after a bulk load: done here, untimed, so that the
    // read phase measures reads rather than a vacuum running beside them.
    await pool.query(sql.typeAlias('void')`VACUUM ANALYZE events`);
    const streamAll = store.streamAll;
    if (!streamAll) throw new Error('the Postgres event store has no streamAll');
    const read = await timed('stream', append.count, async (progress) => {
      let count = 0;
      for await (const batch of streamAll(logStart, readBatch)) {
        count += batch.events.length;
        progress(count);
      }
      return count;
    });
    if (read.count !== append.count) throw new Error(`streamed ${read.count} events back, appended ${append.count}`);
    const paged = await timed('readAll', append.count, async (progress) => {
      let position: LogPosition = logStart;
      let count = 0;
      for (;;) {
        const batch = await store.readAll(position, readBatch);
        count += batch.events.length;
        position = batch.next;
        progress(count);
        if (batch.atHead) return count;
      }
    });
    if (paged.count !== append.count) throw new Error(`read ${paged.count} events back, appended ${append.count}`);

    const copy = await timed('COPY', append.count, async (progress) => {
      const again = createSyntheticLog(logOptions);
      const result = await copyBaseline({
        pool,
        connectionUri,
        batches: function* () {
          for (let batch = 0; batch < again.batchCount; batch += 1) yield again.batch(batch);
        },
        onRows: progress,
      });
      return result.rows;
    });

    const appendEventsPerSec = Math.round(append.count / append.seconds);
    const readEventsPerSec = Math.round(read.count / read.seconds);
    const readAllEventsPerSec = Math.round(paged.count / paged.seconds);
    const copyRowsPerSec = Math.round(copy.count / copy.seconds);
    return {
      bench: 'eventstore',
      figures: {
        appendEventsPerSec,
        readEventsPerSec,
        readAllEventsPerSec,
        copyRowsPerSec,
        events: append.count,
        peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      },
      ratio: Number((appendEventsPerSec / copyRowsPerSec).toFixed(3)),
      target: { appendEventsPerSec: 20_000, readEventsPerSec: 100_000 },
    };
  } finally {
    await store.close();
    await pool.end();
    await admin.query(sql.typeAlias('void')`DROP DATABASE IF EXISTS ${sql.identifier([name])} WITH (FORCE)`);
    await admin.end();
  }
}

async function timed(phase: string, total: number, work: (progress: (done: number) => void) => Promise<number>) {
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: `${phase.padEnd(8)} [{bar}] {value}/{total} {eta_formatted}`, etaBuffer: 50 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  const started = process.hrtime.bigint();
  const count = await work((done) => bar.update(done));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  bar.stop();
  note(`${phase}: ${count} in ${seconds.toFixed(2)} s = ${Math.round(count / seconds)}/s`);
  return { count, seconds };
}

function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

function positiveInteger(option: string, value: string | undefined): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${option} must be a positive integer, got ${value}`);
  return parsed;
}
