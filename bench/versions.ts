import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { generateHistory } from '../src/console/history/generateHistory.js';
import { migrate } from '../src/platform/migrate.js';
import { sql } from '../src/platform/sql.js';
import { consoleThatChanged } from '../test/support/eventVersions.js';
import { createBenchDatabase, historyOptions, historyParamsOf, note, openBenchStore, round, seedBenchHistory, type BenchDatabase } from './benchSupport.js';
import { commandReplay } from './replay.js';
import type { BenchResult } from './run.js';

/**
 * The cost of reading older event versions: the same history rebuilt (`supply-api projections
 * replay`, as in the replay bench) from a log all in the first versions of the changed types
 * (src/events/upcasters.ts) and from one whose older half is in the first versions and the rest
 * in the current ones (every event of the first half upcast as it is read; the ledger's load from
 * the log reads both in SQL). The two databases are seeded first, then rebuilt in turn, `rounds`
 * times each (the machine's speed drifts over minutes: alternating keeps both on the same
 * machine). Target: the mixed log's median rebuild within 5 % of the all-first-version log's.
 *
 *   npm run bench -- versions [--scale small|medium|large] [--rounds 3] [--seed 7]
 */
export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: { ...historyOptions('large'), rounds: { type: 'string', default: '3' } },
  });
  const params = historyParamsOf(values);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
  execFileSync(process.execPath, ['bin/build.js'], { stdio: 'inherit' });

  let events = 0;
  for (const write of generateHistory(params)) events += write.events.length;
  const logs: { label: string; firstVersionEvents: number; database?: BenchDatabase }[] = [
    { label: 'first versions', firstVersionEvents: events },
    { label: 'half first, half current', firstVersionEvents: Math.floor(events / 2) },
  ];
  try {
    for (const log of logs) {
      const database = await createBenchDatabase();
      log.database = database;
      const opened = await openBenchStore(database);
      try {
        await migrate(opened.pool, opened.logger);
        const seeded = await seedBenchHistory(consoleThatChanged(opened.store, { firstVersionEvents: log.firstVersionEvents }).store, params);
        note(`${log.label}: ${seeded.events} events in ${seeded.seconds.toFixed(1)} s (setup, not measured)`);
        await opened.pool.query(sql.typeAlias('void')`VACUUM ANALYZE`);
        await opened.pool.query(sql.typeAlias('void')`CHECKPOINT`);
      } finally {
        await opened.close();
      }
    }
    const seconds: number[][] = logs.map(() => []);
    for (let turn = 0; turn < rounds; turn += 1) {
      for (const [index, log] of logs.entries()) {
        if (log.database === undefined) throw new Error(`no database for ${log.label}`);
        const replay = await commandReplay({ connectionUri: log.database.connectionUri, database: log.database.name, batchSize: 5000, parallelism: 2, strict: false });
        if (replay.events !== events) throw new Error(`${log.label}: replayed ${replay.events} events, the history has ${events}`);
        note(`round ${turn + 1}, ${log.label}: ${replay.seconds.toFixed(2)} s = ${Math.round(replay.events / replay.seconds)} events/s`);
        seconds[index]?.push(replay.seconds);
      }
    }
    const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    const [firstVersions, mixed] = seconds.map(median) as [number, number];
    const ratio = round(mixed / firstVersions, 3);
    const target = { mixedOverFirstVersions: 1.05 };
    return {
      bench: 'versions',
      figures: {
        events,
        rounds,
        firstVersionsSeconds: round(firstVersions, 2),
        mixedSeconds: round(mixed, 2),
        firstVersionsEventsPerSec: Math.round(events / firstVersions),
        mixedEventsPerSec: Math.round(events / mixed),
      },
      ratio,
      target,
      pass: { mixedOverFirstVersions: ratio <= target.mixedOverFirstVersions },
    };
  } finally {
    for (const log of logs) await log.database?.drop();
  }
}
