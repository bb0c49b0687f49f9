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

/** Ready when the database answers and every projection is within `readyLag` of the head. */
export function createReadiness(pool: DatabasePool, report: () => Promise<ProjectionsReport>): () => Promise<Readiness> {
  return async (): Promise<Readiness> => {
    try {
      await pool.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`);
    } catch {
      return { ready: false, checks: { database: 'unreachable' } };
    }
    const current = await report();
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
