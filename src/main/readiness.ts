import { Gauge, type Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Readiness } from '../api/healthRoutes.js';
import { sql } from '../platform/sql.js';
import type { ReadRouter } from '../platform/readReplicas.js';
import type { ProjectionsReport } from '../projecting/status.js';

/**
 * A projection further behind than this keeps an API process that has not caught up yet from
 * being ready: both bounds, because a seeded or imported log can hold a million events recorded
 * within seconds.
 */
export const readyLag = { events: 5000, seconds: 30 } as const;

/** Longest a readiness check waits for the database; a pool that cannot answer a `SELECT 1` by then is unusable. */
export const readinessCheckTimeoutMs = 2_000;

export type ReadinessOptions = {
  /**
   * The process serves /v1 and /mcp (the api role): it becomes ready once the projections have
   * caught up (within `readyLag` of the log, none missing or outdated), and stays ready after that
   * whatever their lag. Other roles are ready while their database answers.
   */
  readonly servesReads: boolean;
  readonly timeoutMs?: number;
  /** With READ_DATABASE_URL: the standbys' states are shown (they never make the process unready). */
  readonly router?: ReadRouter;
};

/**
 * Ready when the database answers through every pool the process serves with (a pool whose slots
 * are all stuck answers nothing, even while Postgres is fine) and, for a process serving reads,
 * once the projections have caught up since it started. A projector that stops makes the read
 * models older, visibly (supply_projection_lag_seconds, SupplyProjectionLag), but takes no API
 * process out: with one stopped projector every process would otherwise be unready at once, and
 * the load balancer would take the whole API out. A process that has not caught up yet (a fresh
 * install, a new process while the projections are far behind) waits, so that it never answers
 * from read models that are missing or far behind. Every check is bounded, so /readyz answers while
 * the database is away.
 */
export function createReadiness(
  pools: { readonly database: DatabasePool; readonly requests?: DatabasePool },
  report: () => Promise<ProjectionsReport>,
  options: ReadinessOptions,
): () => Promise<Readiness> {
  const { router, servesReads } = options;
  const timeoutMs = options.timeoutMs ?? readinessCheckTimeoutMs;
  const withStandbys = router?.replicated === true ? (readiness: Readiness): Readiness => withStandbyStates(readiness, router) : (readiness: Readiness) => readiness;
  let caughtUpOnce = false;
  return async (): Promise<Readiness> => {
    const [database, requests] = await Promise.all([
      answersWithin(pools.database, timeoutMs),
      pools.requests === undefined ? Promise.resolve(true) : answersWithin(pools.requests, timeoutMs),
    ]);
    if (!database) return withStandbys({ ready: false, checks: { database: 'unreachable' } });
    if (!requests) return withStandbys({ ready: false, checks: { database: 'ok', requestPool: 'unusable' } });
    const projections = await projectionsCheck(report, timeoutMs);
    if (projections.caughtUp) caughtUpOnce = true;
    const ready = !servesReads || caughtUpOnce;
    return withStandbys({ ready, checks: { database: 'ok', projections: projections.check } });
  };
}

/** The projections as /readyz names them, and whether they count as caught up. */
async function projectionsCheck(report: () => Promise<ProjectionsReport>, timeoutMs: number): Promise<{ readonly caughtUp: boolean; readonly check: string }> {
  const current = await withinOrUndefined(report(), timeoutMs);
  if (current === undefined) return { caughtUp: false, check: 'unknown (status did not load in time)' };
  const behind = current.projections.filter((p) => p.state === 'not_started' || p.state === 'outdated' || p.lagSeconds > readyLag.seconds || p.lagEvents > readyLag.events);
  if (behind.length === 0) return { caughtUp: true, check: 'caught_up' };
  return { caughtUp: false, check: `behind: ${behind.map((p) => `${p.projection} (${p.state}, ${p.lagEvents} events, ${Math.round(p.lagSeconds)} s)`).join(', ')}` };
}

/** The standbys as the read router sees them, and a summary among the checks. */
function withStandbyStates(readiness: Readiness, router: ReadRouter): Readiness {
  const standbys = router.standbys();
  const inUse = standbys.filter((s) => s.inUse).length;
  const summary = `${inUse} of ${standbys.length} in use${inUse === 0 ? ' (reads on the primary)' : ''}`;
  return { ...readiness, checks: { ...readiness.checks, standbys: summary }, standbys };
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
 * Per standby (label `standby`, `host:port/database`): `supply_read_replica_lag_seconds` (replay lag
 * as the watcher measures it; absent while the standby does not answer), `supply_read_replica_in_use`
 * (1 while it serves reads) and `supply_read_replica_synchronous` (1 while the primary confirms it
 * as a synchronous standby). Without READ_DATABASE_URL they are exported with no series.
 */
export function registerReadReplicaMetrics(registry: Registry, router: ReadRouter): void {
  new Gauge({
    name: 'supply_read_replica_lag_seconds',
    help: 'Replay lag of each hot standby behind the primary, in seconds (absent while it does not answer)',
    labelNames: ['standby'],
    registers: [registry],
    collect() {
      this.reset();
      for (const standby of router.standbys()) if (standby.lagMs !== null) this.set({ standby: standby.standby }, standby.lagMs / 1000);
    },
  });
  new Gauge({
    name: 'supply_read_replica_in_use',
    help: '1 while the hot standby serves reads of this process, 0 while they go elsewhere',
    labelNames: ['standby'],
    registers: [registry],
    collect() {
      for (const standby of router.standbys()) this.set({ standby: standby.standby }, standby.inUse ? 1 : 0);
    },
  });
  new Gauge({
    name: 'supply_read_replica_synchronous',
    help: '1 while the primary confirms the hot standby as synchronous (what revocations wait for)',
    labelNames: ['standby'],
    registers: [registry],
    collect() {
      for (const standby of router.standbys()) this.set({ standby: standby.standby }, standby.synchronous ? 1 : 0);
    },
  });
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
