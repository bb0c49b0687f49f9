import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { allProjections } from '../projections/index.js';
import { createDatabasePool } from '../src/platform/db.js';
import { runCli, startCli } from '../test/support/cli.js';
import { patroniReadLeaseMs, startPatroniCluster } from '../test/support/patroniCluster.js';
import { readModelDigests } from '../test/support/projectionTestBed.js';
import { startSentinelCluster } from '../test/support/sentinelCluster.js';
import { clientTimeoutMs } from './load.js';
import { redisFailover, settledJobs } from './redisFailover.js';

const leaseMs = patroniReadLeaseMs;
const writeEveryMs = 250;

type Started = Awaited<ReturnType<typeof startCli>>;

/** Seconds until an export POST was acknowledged again after an event, and what the refusals were. */
export type WritesBack = { readonly seconds: number | null; readonly refusals: Record<string, number> };

export type FailoverFigures = {
  readonly clients: number;
  readonly readSeconds: number;
  /** Reads answered 200 with the expected body. */
  readonly readsAnswered: number;
  /** 503 common.service_unavailable: the documented answer while no database can serve the read. */
  readonly reads503: number;
  /** Any other answer that is not 200 (5xx, 4xx, no answer), by `status code`. */
  readonly readErrors: number;
  readonly readErrorsByAnswer: Record<string, number>;
  /** 200s whose body differs from the expected one. */
  readonly wrongAnswers: number;
  readonly leaderKill: { readonly promotedAfterSeconds: number; readonly writesBack: WritesBack; readonly revocationExact: boolean };
  readonly switchover: { readonly seconds: number; readonly writesBack: WritesBack; readonly revocationExact: boolean };
  readonly redisMasterKill: { readonly promotedAfterSeconds: number; readonly writesBackAfterSeconds: number | null; readonly readErrors: number; readonly jobsLost: number; readonly jobsDoubled: number; readonly budgetOvershoot: number };
  readonly revocationExact: boolean;
  readonly digestEqual: boolean;
  /** Export jobs acknowledged (202) during the three events that were never built, or built twice. */
  readonly jobsAcknowledged: number;
  readonly jobsLost: number;
  readonly jobsDoubled: number;
  readonly failures: string[];
};

const seeded = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()), orderIds: z.array(z.string()) })) });
const issuedKey = z.object({ key: z.string(), prefix: z.string() });

/**
 * `npm run drill failover`: etcd and three Patroni nodes, Redis with a replica and three Sentinels,
 * and on them 2 API processes, 2 projectors and a worker (DATABASE_URL and READ_DATABASE_URL the
 * multi-host form of the three nodes, REDIS_URL redis+sentinel://…). `clients` loops read one order
 * through the three events: the leader's machine SIGKILLed, `patronictl switchover`, the Redis
 * master SIGKILLed (drill/redisFailover.ts).
 */
export async function failoverDrill(options: { clients: number; log: (line: string) => void }): Promise<FailoverFigures> {
  const { log } = options;
  const failures: string[] = [];
  const [cluster, sentinel] = await Promise.all([startPatroniCluster({ log }), startSentinelCluster({ log })]);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-drill-failover-'));
  const processes: Started[] = [];
  try {
    const env: Record<string, string> = {
      DATABASE_URL: cluster.url,
      READ_DATABASE_URL: cluster.url,
      READ_REPLICA_LEASE_MS: String(leaseMs),
      REDIS_URL: sentinel.url,
      EXPORT_QUEUE_NAME: `drill-exports-${randomBytes(6).toString('hex')}`,
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: 'info',
    };
    log('seeding');
    const seed = await runCli(['seed', '--tenants', '1', '--seed', '7', '--days', '20', '--as-of', '2026-11-01'], env);
    if (seed.code !== 0) throw new Error(`seed failed: ${seed.stderr}`);
    const tenant = seeded.parse(JSON.parse(seed.stdout)).tenants[0];
    const memberId = tenant?.memberIds[0];
    const orderId = tenant?.orderIds[0];
    if (tenant === undefined || memberId === undefined || orderId === undefined) throw new Error('the seed made no tenant with an order');
    const issue = async (scopes: string) => {
      const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', memberId, '--scopes', scopes], env);
      if (issued.code !== 0) throw new Error(`keys issue failed: ${issued.stderr}`);
      return issuedKey.parse(JSON.parse(issued.stdout));
    };
    const reader = await issue('orders:read,analytics:read');

    for (const role of ['api', 'api', 'projector', 'projector', 'worker'] as const) {
      processes.push(await startCli(['serve', '--port', '0', '--roles', role], env, new RegExp(`"roles":\\["${role}"\\],"msg":"serving"`)));
    }
    const apiBases = processes.slice(0, 2).map((api) => `http://127.0.0.1:${/"port":(\d+),"roles":\["api"\]/.exec(api.output())?.[1] ?? ''}`);
    log('started 2 api, 2 projector and 1 worker processes');
    const waited = await runCli(['projections', 'wait', '--timeout', '180'], env, 200_000);
    if (waited.code !== 0) throw new Error(`projections did not catch up: ${waited.stderr}`);
    const orderPath = `/v1/orders/${encodeURIComponent(orderId)}`;
    const expected = await get(`${apiBases[0] ?? ''}${orderPath}`, reader.key);
    if (expected.status !== 200) throw new Error(`the order read answered ${expected.status}`);
    await standbysInUse(apiBases, 60_000).catch(() => failures.push('the API processes did not read from a standby before the events'));

    const readStarted = performance.now();
    const load = readLoad(apiBases, orderPath, reader.key, expected.body, options.clients);
    const acknowledged: string[] = [];
    /** Revokes a fresh key and reads with it from every API process in turn: true when each read was refused. */
    const revocationExact = async (): Promise<boolean> => {
      const doomed = await issue('orders:read');
      const revoked = await runCli(['keys', 'revoke', '--prefix', doomed.prefix], env);
      if (revoked.code !== 0) throw new Error(`keys revoke failed: ${revoked.stderr}`);
      const statuses: number[] = [];
      for (let i = 0; i < 30; i += 1) statuses.push((await get(`${apiBases[i % apiBases.length] ?? ''}${orderPath}`, doomed.key)).status);
      return statuses.every((status) => status === 401);
    };
    await sleep(5000);

    log('(1) SIGKILL of the leader\'s Patroni and Postgres');
    const leader = await cluster.leader();
    const { at: killedAt } = await cluster.kill(leader);
    const killWrites = writesBack(apiBases, reader.key, killedAt, acknowledged);
    const promoted = await cluster.newLeader(leader);
    const killRevocation = await revocationExact();
    const leaderKill = { promotedAfterSeconds: seconds(promoted.at - killedAt), writesBack: await killWrites, revocationExact: killRevocation };
    log(`${promoted.leader.name} promoted after ${leaderKill.promotedAfterSeconds} s; writes back after ${leaderKill.writesBack.seconds ?? 'never'} s`);
    await cluster.restart(leader);
    await cluster.caughtUp(120_000);

    log('(2) patronictl switchover');
    const switchStarted = performance.now();
    const switchWritesPromise = writesBack(apiBases, reader.key, switchStarted, acknowledged);
    const switched = await cluster.switchover();
    const switchRevocation = await revocationExact();
    const switchover = { seconds: seconds(performance.now() - switchStarted), writesBack: await switchWritesPromise, revocationExact: switchRevocation };
    log(`switchover ${switched.from.name} -> ${switched.to.name}; writes back after ${switchover.writesBack.seconds ?? 'never'} s`);

    log('(3) SIGKILL of the Redis master');
    const pool = await createDatabasePool(cluster.urlOf(await cluster.leader()), 2);
    try {
      const redis = await redisFailover({ sentinel, apiBases, key: reader.key, pool }, { clients: 4, readPath: orderPath, log, restartKilled: false });
      failures.push(...redis.failures.map((failure) => `redis master kill: ${failure}`));
      const redisMasterKill = {
        promotedAfterSeconds: redis.promotedAfterSeconds,
        writesBackAfterSeconds: redis.writesBackAfterSeconds,
        readErrors: redis.readErrors,
        jobsLost: redis.jobsLost,
        jobsDoubled: redis.jobsDoubled,
        budgetOvershoot: redis.budget.overshoot,
      };
      // Reads go on for the rest of the two minutes, then stop.
      await sleep(Math.max(0, 120_000 - (performance.now() - readStarted)));
      const reads = await load.stop();
      const readSeconds = seconds(performance.now() - readStarted);

      log('export jobs acknowledged during the Postgres events, and the read tables against a clean rebuild');
      const states = await settledJobs(pool, acknowledged, 90_000);
      const postgresLost = acknowledged.filter((id) => states.get(id)?.status !== 'ready').length;
      const postgresDoubled = [...states.values()].filter((s) => s.readyCount > 1 || s.attempts > 1 + s.failedCount).length;
      const caught = await runCli(['projections', 'wait', '--timeout', '180'], env, 200_000);
      if (caught.code !== 0) throw new Error(`projections did not catch up after the events: ${caught.stderr}`);
      const live = await readModelDigests(pool, allProjections);
      const replayed = await runCli(['projections', 'replay'], env, 400_000);
      if (replayed.code !== 0) throw new Error(`projections replay failed: ${replayed.stderr}`);
      const rebuilt = await readModelDigests(pool, allProjections);
      const digestEqual = JSON.stringify(live) === JSON.stringify(rebuilt);

      const figures: FailoverFigures = {
        clients: options.clients,
        readSeconds,
        readsAnswered: reads.answered,
        reads503: reads.unavailable,
        readErrors: Object.values(reads.errors).reduce((sum, n) => sum + n, 0),
        readErrorsByAnswer: reads.errors,
        wrongAnswers: reads.wrong,
        leaderKill,
        switchover,
        redisMasterKill,
        revocationExact: killRevocation && switchRevocation,
        digestEqual,
        jobsAcknowledged: acknowledged.length + redis.jobsAcknowledged,
        jobsLost: postgresLost + redis.jobsLost,
        jobsDoubled: postgresDoubled + redis.jobsDoubled,
        failures,
      };
      const writeBound = cluster.timings.ttl + 5 + Math.max(0, leaderKill.promotedAfterSeconds - cluster.timings.ttl);
      if (figures.wrongAnswers > 0) failures.push(`${figures.wrongAnswers} reads answered 200 with a wrong body`);
      if (figures.readErrors > 0) failures.push(`${figures.readErrors} reads answered neither 200 nor 503: ${JSON.stringify(reads.errors)}`);
      const readsTotal = figures.readsAnswered + figures.reads503 + figures.readErrors + figures.wrongAnswers;
      if (figures.reads503 > readsTotal / 1000) failures.push(`${figures.reads503} of ${readsTotal} reads answered 503 (over 0.1 %)`);
      if (leaderKill.writesBack.seconds === null || leaderKill.writesBack.seconds > writeBound) failures.push(`writes came back after ${leaderKill.writesBack.seconds ?? 'never'} s of the leader kill (bound ${writeBound} s)`);
      if (switchover.writesBack.seconds === null) failures.push('writes did not come back after the switchover');
      if (!figures.revocationExact) failures.push('a key revoked right after a failover or switchover was served');
      if (!digestEqual) failures.push('the read tables differ from a clean rebuild');
      if (postgresLost > 0) failures.push(`${postgresLost} export jobs acknowledged during the Postgres events were not built`);
      if (postgresDoubled > 0) failures.push(`${postgresDoubled} export jobs acknowledged during the Postgres events were built twice`);
      return figures;
    } finally {
      await pool.end();
    }
  } finally {
    await Promise.all(processes.map((started) => started.stop()));
    await Promise.all([cluster.close(), sentinel.close()]);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function get(url: string, key: string): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(clientTimeoutMs) });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

/** `clients` loops reading `pathname` over `bases` until stopped; 200s are compared with `expected`. */
function readLoad(bases: readonly string[], pathname: string, key: string, expected: string, clients: number) {
  const counts = { answered: 0, wrong: 0, unavailable: 0, errors: {} as Record<string, number> };
  let running = true;
  const loops = Array.from({ length: clients }, async (_, index) => {
    for (let turn = index; running; turn += 1) {
      const { status, body } = await get(`${bases[turn % bases.length] ?? ''}${pathname}`, key);
      const code = /"code":"([^"]+)"/.exec(body)?.[1];
      if (status === 200 && body === expected) counts.answered += 1;
      else if (status === 200) counts.wrong += 1;
      else if (status === 503 && code === 'common.service_unavailable') counts.unavailable += 1;
      else {
        const label = `${status} ${code ?? ''}`.trim();
        counts.errors[label] = (counts.errors[label] ?? 0) + 1;
      }
      if (status !== 200) await sleep(50);
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return counts;
    },
  };
}

/** An export POST every 250 ms from `since` until one is acknowledged (202, its id kept in `acknowledged`). */
async function writesBack(bases: readonly string[], key: string, since: number, acknowledged: string[]): Promise<WritesBack> {
  const refusals: Record<string, number> = {};
  for (let turn = 0; performance.now() - since < 180_000; turn += 1) {
    try {
      const response = await fetch(`${bases[turn % bases.length] ?? ''}/v1/analytics/exports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{}',
        signal: AbortSignal.timeout(clientTimeoutMs),
      });
      const body: unknown = await response.json().catch(() => undefined);
      const parsed = z.object({ exportId: z.string().optional(), code: z.string().optional() }).safeParse(body);
      if (response.status === 202 && parsed.data?.exportId !== undefined) {
        acknowledged.push(parsed.data.exportId);
        return { seconds: seconds(performance.now() - since), refusals };
      }
      const label = `${response.status} ${parsed.data?.code ?? ''}`.trim();
      refusals[label] = (refusals[label] ?? 0) + 1;
    } catch {
      refusals['0'] = (refusals['0'] ?? 0) + 1;
    }
    await sleep(writeEveryMs);
  }
  return { seconds: null, refusals };
}

/** Waits until every API process's /readyz shows a standby in use for reads. */
async function standbysInUse(bases: readonly string[], timeoutMs: number): Promise<void> {
  const readyz = z.object({ standbys: z.array(z.object({ inUse: z.boolean() })).optional() });
  const deadline = performance.now() + timeoutMs;
  for (const base of bases) {
    for (;;) {
      const body: unknown = await fetch(`${base}/readyz`).then((r) => r.json()).catch(() => ({}));
      if ((readyz.safeParse(body).data?.standbys ?? []).some((s) => s.inUse)) break;
      if (performance.now() > deadline) throw new Error('no standby in use');
      await sleep(200);
    }
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
