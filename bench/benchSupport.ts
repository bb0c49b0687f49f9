import { randomBytes } from 'node:crypto';
import type { EventStore } from '../src/eventStore/eventStore.js';
import { createProgressBar } from '../src/cli/progressBar.js';
import { seed } from '../src/console/seed.js';
import type { SeedSummary } from '../src/console/seedSummary.js';
import type { HistoryParams } from '../src/console/history/historyParams.js';
import { createDatabasePool } from '../src/platform/db.js';
import { sql } from '../src/platform/sql.js';

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
