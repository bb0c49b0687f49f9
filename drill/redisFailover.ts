import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { createRequestBudget, type RequestBudget } from '../src/api/rateLimit/requestBudget.js';
import { createLogger } from '../src/platform/logger.js';
import { sql } from '../src/platform/sql.js';
import type { SentinelCluster } from '../test/support/sentinelCluster.js';
import { waitFor } from '../test/support/waitFor.js';
import { runLoad, type Sample } from './load.js';

/** How often the drill looks at what it waits for: the resolution of its figures. */
const pollMs = 50;

/**
 * What the step needs of a running deployment: its Sentinel set-up (test/support/sentinelCluster.ts),
 * API processes and export workers started with REDIS_URL = `sentinel.url`, a key holding
 * `analytics:read` and the scope of `readPath`, and a pool on the deployment's database.
 */
export type RedisFailoverTarget = {
  readonly sentinel: SentinelCluster;
  readonly apiBases: readonly string[];
  readonly key: string;
  readonly pool: DatabasePool;
};

export type RedisFailoverOptions = {
  /** Read loops during the step (default 8). */
  readonly clients?: number;
  /** What they read (default `/v1/orders?limit=20`). */
  readonly readPath?: string;
  /** One export POST this often (default 250 ms), spread over the API processes. */
  readonly exportEveryMs?: number;
  /** How long every acknowledged job has to end `ready` once the load stops (default 90 s). */
  readonly buildBoundMs?: number;
  /** Restart the killed node as a replica afterwards, so that the set-up can fail over again (default true). */
  readonly restartKilled?: boolean;
  readonly log?: (line: string) => void;
};

/**
 * The request budget as two API processes count it (the service's own code, on the Sentinel set-up),
 * requests spread over both as a load balancer would, through the failover: a key with `leftAtKill`
 * of `points` left, and a key already refused by both.
 */
export type BudgetFigures = {
  readonly processes: number;
  readonly points: number;
  readonly leftAtKill: number;
  /** What each process last heard from Redis was left (its view lags the shared count by the other's requests). */
  readonly leftSeenByEach: readonly number[];
  /** Requests granted in the window, all told (before, during and after the failover). */
  readonly granted: number;
  /** granted - points, at least 0. */
  readonly overshoot: number;
  /** sum(leftSeenByEach) - leftAtKill: what the rule allows (BudgetLedger); (processes - 1) * leftAtKill when every view is current. */
  readonly bound: number;
  /** Requests granted to the key both processes had seen refused before the kill (0 is right). */
  readonly grantedToExhausted: number;
  /** Consumes that threw instead of answering (each would have been a 500). */
  readonly errors: number;
};

export type RedisFailoverFigures = {
  /** SIGKILL to Sentinel's +switch-master. */
  readonly promotedAfterSeconds: number;
  /** SIGKILL to the first export POST acknowledged (202) again. */
  readonly writesBackAfterSeconds: number | null;
  readonly reads: number;
  /** Reads answered 5xx or not at all. */
  readonly readErrors: number;
  readonly exportPosts: number;
  /** `status code` → count, e.g. `202`, `500 common.internal_error`. */
  readonly exportAnswers: Record<string, number>;
  /** The longest a refused export POST (not 202) took to answer. */
  readonly slowestRefusalSeconds: number;
  /** Jobs pending or building when the master was killed. */
  readonly jobsInFlightAtKill: number;
  readonly jobsAcknowledged: number;
  readonly jobsAcknowledgedAfterPromotion: number;
  /** Acknowledged jobs not ready within buildBoundMs (or whose row is gone). */
  readonly jobsLost: number;
  /** Jobs whose build started more than once without a failed build before it, or that were recorded ready twice. */
  readonly jobsDoubled: number;
  /** Rows of jobs whose POST did not answer 202 (the client was told there is no job). */
  readonly strayJobs: number;
  readonly budget: BudgetFigures;
  readonly failures: string[];
};

type ExportPost = { readonly sample: Sample; readonly exportId?: string };

const jobState = z.object({ exportId: z.string(), status: z.string(), attempts: z.number().int(), readyCount: z.number().int(), failedCount: z.number().int() });
const budgetPoints = 20;
const budgetLeftAtKill = 8;

/**
 * Kills the Redis master with SIGKILL under load (reads, export POSTs, and the request budget of
 * two processes) and measures what the failover cost: when writes came back, whether any request
 * failed, whether any acknowledged export job was lost or built twice, and how far the budget
 * went past its limit. Leaves the set-up with a master and a replica again (restartKilled).
 */
export async function redisFailover(target: RedisFailoverTarget, options: RedisFailoverOptions = {}): Promise<RedisFailoverFigures> {
  const log = options.log ?? (() => undefined);
  const failures: string[] = [];
  const startedAt = new Date().toISOString();
  const prefix = `supply-drill:budget:${randomBytes(6).toString('hex')}`;
  const budgets = await Promise.all([0, 1].map(() => createRequestBudget({ pointsPerWindow: budgetPoints, windowSeconds: 60, redisUrl: target.sentinel.url, logger: createLogger('silent'), keyPrefix: prefix })));
  const leftSeenByEach = budgets.map(() => budgetPoints);
  for (let i = 0; i < budgetPoints - budgetLeftAtKill; i += 1) {
    const turn = i % budgets.length;
    const decision = await budgets[turn]?.consume('partial');
    leftSeenByEach[turn] = decision?.remaining ?? budgetPoints;
  }
  // Until each process has been refused once: a key past its budget, as both know it.
  for (let i = 0; i < budgetPoints + budgets.length; i += 1) await budgets[i % budgets.length]?.consume('exhausted');
  await target.sentinel.replicated();

  const stop = new AbortController();
  const reading = runLoad({ bases: target.apiBases, path: options.readPath ?? '/v1/orders?limit=20', key: target.key, clients: options.clients ?? 8, stop: stop.signal });
  const posts: ExportPost[] = [];
  const posting = (async () => {
    for (let turn = 0; !stop.signal.aborted; turn += 1) {
      const post = await postExport(`${target.apiBases[turn % target.apiBases.length] ?? ''}/v1/analytics/exports`, target.key);
      posts.push(post);
      if (post.sample.status !== 202) log(`export POST answered ${post.sample.status} ${post.sample.code ?? ''} in ${Math.round(post.sample.endedAt - post.sample.startedAt)} ms`);
      await sleep(options.exportEveryMs ?? 250);
    }
  })();

  // Mid-export: a burst of requests, and the master killed once one of their jobs is stored and not yet built.
  await waitFor('a first accepted export', 30_000, async () => posts.some((p) => p.sample.status === 202), pollMs);
  const burst = Promise.all(target.apiBases.flatMap((base) => [0, 1].map(() => postExport(`${base}/v1/analytics/exports`, target.key))));
  // Counted just before the kill: read again after it, the count may already be 0 (a build takes milliseconds).
  let jobsInFlightAtKill = 0;
  await waitFor('an export build in flight', 10_000, async () => (jobsInFlightAtKill = await inFlight(target.pool, startedAt)) > 0, pollMs);
  const { killed, at: killedAt } = await target.sentinel.killMaster();
  posts.push(...(await burst));
  log(`Redis master :${killed.port} SIGKILLed with ${jobsInFlightAtKill} export jobs in flight`);

  const budgetRun = hammerBudgets(budgets, stop.signal);
  const promotion = await target.sentinel.promotion(killed);
  const promotedAfterSeconds = seconds(promotion.at - killedAt);
  log(`replica :${promotion.to.port} promoted ${promotedAfterSeconds} s after the kill`);
  // Load goes on until exports have been acknowledged again for a while, so the worker is seen to go on.
  await waitFor('5 exports accepted after the promotion', 30_000, async () => posts.filter((p) => p.sample.status === 202 && p.sample.startedAt > promotion.at).length >= 5, pollMs);
  stop.abort();
  const [reads, , budgetCounts] = await Promise.all([reading, posting, budgetRun]);
  // A process's next request hands Redis what it granted meanwhile, but only once its connection is
  // on the new master (a command that outlives its 1 s timeout, this process's event loop busy with
  // the read loops, is counted here instead). Each is first seen to reach Redis (a request on a key
  // of its own, found there), then makes that request; within 10 s, well inside the 60 s window.
  for (const [index, budget] of budgets.entries()) {
    await waitFor(`budget process ${index + 1} on the new master`, 10_000, async () => {
      const probe = `probe-${index}-${randomBytes(4).toString('hex')}`;
      await budget.consume(probe);
      return (await withMaster(target.sentinel, (redis) => redis.exists(`${prefix}:${probe}`))) === 1;
    }, pollMs).catch(() => failures.push(`budget process ${index + 1} did not reach Redis again within 10 s`));
  }
  for (const budget of budgets) if ((await budget.consume('partial')).allowed) budgetCounts.granted += 1;
  const sharedCount = Number((await withMaster(target.sentinel, (redis) => redis.get(`${prefix}:partial`))) ?? 0);
  for (const budget of budgets) await budget.close();
  if (sharedCount < budgetPoints) failures.push(`after the failover Redis counts ${sharedCount} for a key that used its ${budgetPoints}`);

  const acknowledged = posts.filter((p): p is Required<ExportPost> => p.exportId !== undefined);
  const afterPromotion = acknowledged.filter((p) => p.sample.startedAt > promotion.at);
  const states = await settledJobs(target.pool, acknowledged.map((p) => p.exportId), options.buildBoundMs ?? 90_000);
  const jobsLost = acknowledged.filter((p) => states.get(p.exportId)?.status !== 'ready').length;
  const jobsDoubled = [...states.values()].filter((s) => s.readyCount > 1 || s.attempts > 1 + s.failedCount).length;
  const strayJobs = await strays(target.pool, startedAt, new Set(acknowledged.map((p) => p.exportId)));

  const exportAnswers: Record<string, number> = {};
  for (const { sample } of posts) {
    const label = sample.code === undefined ? String(sample.status) : `${sample.status} ${sample.code}`;
    exportAnswers[label] = (exportAnswers[label] ?? 0) + 1;
  }
  const firstBack = acknowledged.filter((p) => p.sample.startedAt > killedAt).sort((a, b) => a.sample.endedAt - b.sample.endedAt)[0];
  const readErrors = reads.filter((r) => r.status === 0 || r.status >= 500).length;
  const granted = budgetPoints - budgetLeftAtKill + budgetCounts.granted;
  const budget: BudgetFigures = {
    processes: budgets.length,
    points: budgetPoints,
    leftAtKill: budgetLeftAtKill,
    leftSeenByEach,
    granted,
    overshoot: Math.max(0, granted - budgetPoints),
    bound: leftSeenByEach.reduce((sum, left) => sum + left, 0) - budgetLeftAtKill,
    grantedToExhausted: budgetCounts.grantedToExhausted,
    errors: budgetCounts.errors,
  };

  if (readErrors > 0) failures.push(`${readErrors} of ${reads.length} reads answered 5xx or nothing`);
  const wrongAnswers = Object.keys(exportAnswers).filter((label) => label !== '202' && label !== '500 common.internal_error');
  if (wrongAnswers.length > 0) failures.push(`export POSTs answered ${JSON.stringify(exportAnswers)}`);
  if (firstBack === undefined) failures.push('no export POST was acknowledged after the kill');
  if (afterPromotion.length === 0) failures.push('no export was acknowledged after the promotion');
  if (jobsLost > 0) failures.push(`${jobsLost} acknowledged export jobs were not built`);
  if (jobsDoubled > 0) failures.push(`${jobsDoubled} export jobs were built twice`);
  if (strayJobs > 0) failures.push(`${strayJobs} export jobs exist whose POST did not answer 202`);
  if (budget.overshoot > budget.bound) failures.push(`the budget was overshot by ${budget.overshoot} (bound ${budget.bound})`);
  if (budget.grantedToExhausted > 0) failures.push(`${budget.grantedToExhausted} requests were granted to a key that had used its budget`);
  if (budget.errors > 0) failures.push(`${budget.errors} budget checks failed instead of answering`);

  if (options.restartKilled ?? true) await target.sentinel.restartKilled();
  return {
    promotedAfterSeconds,
    writesBackAfterSeconds: firstBack === undefined ? null : seconds(firstBack.sample.endedAt - killedAt),
    reads: reads.length,
    readErrors,
    exportPosts: posts.length,
    exportAnswers,
    slowestRefusalSeconds: seconds(Math.max(0, ...posts.filter((p) => p.sample.status !== 202).map((p) => p.sample.endedAt - p.sample.startedAt))),
    jobsInFlightAtKill,
    jobsAcknowledged: acknowledged.length,
    jobsAcknowledgedAfterPromotion: afterPromotion.length,
    jobsLost,
    jobsDoubled,
    strayJobs,
    budget,
    failures,
  };
}

/** Each "process" asks for both keys in turn, every few milliseconds, until stopped. */
async function hammerBudgets(budgets: readonly RequestBudget[], stop: AbortSignal): Promise<{ granted: number; grantedToExhausted: number; errors: number }> {
  const counts = { granted: 0, grantedToExhausted: 0, errors: 0 };
  const loop = async (budget: RequestBudget): Promise<void> => {
    while (!stop.aborted) {
      try {
        if ((await budget.consume('partial')).allowed) counts.granted += 1;
        if ((await budget.consume('exhausted')).allowed) counts.grantedToExhausted += 1;
      } catch {
        counts.errors += 1;
      }
      await sleep(10);
    }
  };
  await Promise.all(budgets.map(loop));
  return counts;
}

async function postExport(url: string, key: string): Promise<ExportPost> {
  const startedAt = performance.now();
  try {
    const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(60_000) });
    const body: unknown = await response.json().catch(() => undefined);
    const parsed = z.object({ exportId: z.string().optional(), code: z.string().optional() }).safeParse(body);
    const fields = parsed.success ? parsed.data : {};
    const sample: Sample = { startedAt, endedAt: performance.now(), status: response.status, ...(fields.code === undefined ? {} : { code: fields.code }) };
    return response.status === 202 && fields.exportId !== undefined ? { sample, exportId: fields.exportId } : { sample };
  } catch {
    return { sample: { startedAt, endedAt: performance.now(), status: 0 } };
  }
}

async function inFlight(pool: DatabasePool, since: string): Promise<number> {
  return pool.oneFirst(sql.type(z.object({ count: z.number().int() }))`
    SELECT count(*)::int AS count FROM export_jobs WHERE requested_at >= ${since} AND status IN ('pending', 'building')
  `);
}

/** Each job's state once every one has settled (ready or failed for good) or the bound has passed. */
export async function settledJobs(pool: DatabasePool, exportIds: readonly string[], boundMs: number): Promise<Map<string, z.infer<typeof jobState>>> {
  const read = async () =>
    pool.any(sql.type(jobState)`
      SELECT j.export_id AS "exportId", j.status, j.attempts,
             (SELECT count(*)::int FROM audit_trail a WHERE a.tenant_id = j.tenant_id AND a.export_id = j.export_id AND a.action = 'export.ready') AS "readyCount",
             (SELECT count(*)::int FROM audit_trail a WHERE a.tenant_id = j.tenant_id AND a.export_id = j.export_id AND a.action = 'export.failed') AS "failedCount"
      FROM export_jobs j WHERE j.export_id = ANY(${sql.array([...exportIds], 'text')})
    `);
  let rows = await read();
  await waitFor(
    'every export ready',
    boundMs,
    async () => {
      rows = await read();
      return rows.length === exportIds.length && rows.every((row) => row.status === 'ready');
    },
    pollMs,
  ).catch(() => undefined);
  return new Map(rows.map((row) => [row.exportId, row]));
}

async function strays(pool: DatabasePool, since: string, acknowledged: ReadonlySet<string>): Promise<number> {
  const ids = await pool.anyFirst(sql.type(z.object({ exportId: z.string() }))`SELECT export_id AS "exportId" FROM export_jobs WHERE requested_at >= ${since}`);
  return ids.filter((id) => !acknowledged.has(id)).length;
}

async function withMaster<T>(sentinel: SentinelCluster, use: (redis: Awaited<ReturnType<SentinelCluster['masterClient']>>) => Promise<T>): Promise<T> {
  const redis = await sentinel.masterClient();
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
