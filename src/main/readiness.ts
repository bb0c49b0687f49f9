import { Gauge, type Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Readiness } from '../api/healthRoutes.js';
import { sql } from '../platform/sql.js';
import type { ProjectionsReport } from '../projecting/status.js';

/**
 * A projection further behind than this makes the service not ready: both bounds, because a
 * seeded or imported log can hold a million events recorded within seconds.
 */
export const readyLag = { events: 5000, seconds: 30 } as const;

/** Longest a readiness check waits for the database; a pool that cannot answer a `SELECT 1` by then is unusable. */
export const readinessCheckTimeoutMs = 2_000;

/**
 * Ready when the database answers through every pool the process serves with (a pool whose slots
 * are all stuck answers nothing, even while Postgres is fine) and every projection is within
 * `readyLag` of the head. Every check is bounded, so /readyz answers while the database is away.
 */
export function createReadiness(
  pools: { readonly database: DatabasePool; readonly requests?: DatabasePool },
  report: () => Promise<ProjectionsReport>,
  timeoutMs: number = readinessCheckTimeoutMs,
): () => Promise<Readiness> {
  return async (): Promise<Readiness> => {
    const [database, requests] = await Promise.all([
      answersWithin(pools.database, timeoutMs),
      pools.requests === undefined ? Promise.resolve(true) : answersWithin(pools.requests, timeoutMs),
    ]);
    if (!database) return { ready: false, checks: { database: 'unreachable' } };
    if (!requests) return { ready: false, checks: { database: 'ok', requestPool: 'unusable' } };
    const current = await withinOrUndefined(report(), timeoutMs);
    if (current === undefined) return { ready: false, checks: { database: 'ok', projections: 'unknown (status did not load in time)' } };
    const behind = current.projections.filter((p) => p.state === 'not_started' || p.state === 'outdated' || p.lagSeconds > readyLag.seconds || p.lagEvents > readyLag.events);
    return {
      ready: behind.length === 0,
      checks: {
        database: 'ok',
        projections: behind.length === 0 ? 'caught_up' : `behind: ${behind.map((p) => `${p.projection} (${p.state}, ${p.lagEvents} events)`).join(', ')}`,
      },
    };
  };
}

async function answersWithin(pool: DatabasePool, timeoutMs: number): Promise<boolean> {
  const answer = pool.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`);
  return (await withinOrUndefined(answer, timeoutMs)) === 1;
}

/** The value, or undefined when the promise rejects or takes longer than `timeoutMs`. */
async function withinOrUndefined<T>(promise: Promise<T>, timeoutMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `load` at most once per `ttlMs`; callers in between share the last answer or the running load. */
export function cachedFor<T>(ttlMs: number, load: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = performance.now();
    if (last && now - last.at < ttlMs) return last.value;
    const value = load();
    last = { at: now, value };
    value.catch(() => {
      if (last?.value === value) last = undefined;
    });
    return value;
  };
}

/**
 * `supply_ready`: 1 when the process would answer /readyz with 200, checked at scrape time, so
 * that an alert can see a process that serves but is not ready (database away, projections behind).
 */
export function registerReadinessMetric(registry: Registry, readiness: () => Promise<Readiness>): void {
  new Gauge({
    name: 'supply_ready',
    help: '1 when this process is ready (what /readyz answers 200 to), 0 otherwise',
    registers: [registry],
    async collect() {
      const current = await readiness().catch((): Readiness => ({ ready: false, checks: {} }));
      this.set(current.ready ? 1 : 0);
    },
  });
}
