import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createConsoleActions } from '../src/console/consoleActions.js';
import { createPostgresEventStore } from '../src/eventStore/postgresEventStore.js';
import { revokeKey } from '../src/keys/keyIssuer.js';
import { createLogger } from '../src/platform/logger.js';
import { systemClock } from '../src/platform/clock.js';
import { createDatabasePool } from '../src/platform/db.js';
import { sql } from '../src/platform/sql.js';
import { runCli, startCli } from '../test/support/cli.js';
import { startStandbyCluster } from '../test/support/standbyCluster.js';
import { request, runLoad, type Sample } from './load.js';

/** Reads must leave a standby that stopped or fell behind this soon (the issue's 2 s). */
export const switchBoundMs = 2000;
const maxLagMs = 5000;

export type StandbyStopFigures = {
  readonly clients: number;
  readonly requests: number;
  /** Answers other than 200 for the valid key (a read served wrong), and 200s for a key revoked before the request started. */
  readonly wrongAnswers: number;
  readonly statuses: Record<string, number>;
  /** From the start of the standby's stop (`pg_ctl stop -m fast`) until every API process reads from the primary. */
  readonly offStandbyMs: number | null;
  /** A revocation committed while the standby was down (it waits for the steward to take the standby out of the synchronous set). */
  readonly revocationWhileDownMs: number;
  /** From the standby's restart until every API process reads from it again. */
  readonly backOnStandbyMs: number | null;
  readonly failures: string[];
};

export type ReplayPausedFigures = {
  readonly maxLagMs: number;
  /** From the moment the lag passed the bound (at the latest) until every API process read from the primary. */
  readonly offAfterBoundMs: number | null;
  /** Largest lag /readyz showed while replay was paused. */
  readonly largestLagMs: number;
  /** A revocation committed while replay was paused (waits until the standby leaves the synchronous set). */
  readonly revocationWhilePausedMs: number;
  /** From pg_wal_replay_resume() until every API process reads from the standby again. */
  readonly backOnStandbyMs: number | null;
  readonly wrongAnswers: number;
  readonly failures: string[];
};

export type ReplaySwitchFigures = {
  readonly requests: number;
  readonly non200: number;
  /** Share of /readyz samples during the replay that showed the standby serving reads. */
  readonly standbyInUseShare: number;
  readonly replaySeconds: number;
  readonly failures: string[];
};

export type ReadReplicaFigures = {
  readonly standbyStop: StandbyStopFigures;
  readonly replayPaused: ReplayPausedFigures;
  readonly replaySwitch: ReplaySwitchFigures;
  /** A revocation's commit with the standby up and idle (remote_apply: the standby's apply included), median of 5. */
  readonly revocationMs: number;
  readonly failures: string[];
};

const lsnRow = z.object({ lsn: z.string() });

const readyzBody = z.object({ standbys: z.array(z.object({ inUse: z.boolean(), lagMs: z.number().nullable() })).optional() });

/**
 * A primary and a hot standby of its own, 2 API processes reading from the standby
 * (READ_DATABASE_URL) and a projector: the standby stopped under `clients` clients, its replay
 * paused until the lag passes the bound, and a replay and switch while it serves reads.
 */
export async function readReplicaDrill(options: { clients: number; log: (line: string) => void }): Promise<ReadReplicaFigures> {
  const { log } = options;
  const cluster = await startStandbyCluster({ log: (line) => log(`read replicas: ${line}`) });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-drill-replicas-'));
  const env: Record<string, string> = {
    DATABASE_URL: cluster.primaryUrl,
    READ_DATABASE_URL: cluster.standbyUrl,
    READ_REPLICA_STEWARD: 'true',
    READ_REPLICA_MAX_LAG_MS: String(maxLagMs),
    DATA_DIR: dataDir,
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'info',
  };
  const primary = await createDatabasePool(cluster.primaryUrl, 2);
  const standbyAdmin = await createDatabasePool(cluster.standbyAdminUrl, 1);
  const eventStore = createPostgresEventStore({ pool: primary, kind: 'postgres', logger: createLogger('silent'), connectionUri: cluster.primaryUrl });
  const consoleActions = createConsoleActions({ eventStore, clock: systemClock });
  const services: Awaited<ReturnType<typeof startCli>>[] = [];
  try {
    const seeded = await runCli(['seed', '--tenants', '1', '--seed', '7'], env);
    if (seeded.code !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
    const tenant = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()), orderIds: z.array(z.string()) })) }).parse(JSON.parse(seeded.stdout)).tenants[0];
    if (tenant === undefined) throw new Error('the seed made no tenant');
    const issue = async (): Promise<string> => {
      const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', tenant.memberIds[0] ?? '', '--scopes', 'orders:read', '--name', 'drill'], env);
      if (issued.code !== 0) throw new Error(`keys issue failed: ${issued.stderr}`);
      return z.object({ key: z.string() }).parse(JSON.parse(issued.stdout)).key;
    };
    const revoke = async (key: string): Promise<number> => {
      const started = performance.now();
      await revokeKey({ pool: primary, clock: systemClock }, key.slice(0, 12));
      return Math.round(performance.now() - started);
    };
    services.push(await startCli(['serve', '--port', '0', '--roles', 'projector'], env, /"msg":"serving"/));
    for (let i = 0; i < 2; i += 1) services.push(await startCli(['serve', '--port', '0', '--roles', 'api'], env, /"msg":"serving"/));
    const bases = services.slice(1).map((service) => {
      const port = /"port":(\d+),"roles":\["api"\],"msg":"serving"/.exec(service.output())?.[1];
      if (port === undefined) throw new Error('an API process did not say its port');
      return `http://127.0.0.1:${port}`;
    });
    const waited = await runCli(['projections', 'wait', '--timeout', '120'], env);
    if (waited.code !== 0) throw new Error(`projections did not catch up: ${waited.stderr}`);

    const standbyStates = async () =>
      Promise.all(
        bases.map(async (base) => {
          const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
          const body = response === undefined ? undefined : readyzBody.safeParse(await response.json().catch(() => undefined));
          return body?.success === true ? body.data.standbys?.[0] : undefined;
        }),
      );
    const everywhere = async (inUse: boolean): Promise<boolean> => (await standbyStates()).every((state) => state?.inUse === inUse);
    const until = async (condition: () => Promise<boolean>, timeoutMs: number): Promise<number | null> => {
      const started = performance.now();
      while (performance.now() - started < timeoutMs) {
        if (await condition()) return Math.round(performance.now() - started);
        await sleep(25);
      }
      return null;
    };
    if ((await until(() => everywhere(true), 30_000)) === null) throw new Error('the standby never came into use');

    const key = await issue();
    const revocationTimes: number[] = [];
    for (let i = 0; i < 5; i += 1) revocationTimes.push(await revoke(await issue()));
    const revocationMs = revocationTimes.sort((a, b) => a - b)[2] ?? 0;
    log(`read replicas: revocation commits in ${revocationMs} ms (median of 5) with the standby up`);

    // ── The standby stopped under load ─────────────────────────────────────────────────────────
    log(`read replicas: standby stopped under ${options.clients} clients`);
    const stopFigures = await (async (): Promise<StandbyStopFigures> => {
      const doomed = await issue();
      const stop = new AbortController();
      const load = runLoad({ bases, path: '/v1/orders?limit=5', key, clients: options.clients, stop: stop.signal });
      const revokedSamples: Sample[] = [];
      await sleep(2000);
      const stopping = performance.now();
      await cluster.stopStandby();
      const offAfterStop = await until(() => everywhere(false), 10_000);
      // From the moment the stop began (pg_ctl ends the standby's connections first).
      const offStandbyMs = offAfterStop === null ? null : Math.round(performance.now() - stopping);
      const revocationWhileDownMs = await revoke(doomed);
      const revokedAt = performance.now();
      for (const base of bases) revokedSamples.push(await request(`${base}/v1/orders?limit=1`, doomed));
      await sleep(2000);
      await cluster.startStandby();
      const backOnStandbyMs = await until(() => everywhere(true), 30_000);
      for (const base of bases) revokedSamples.push(await request(`${base}/v1/orders?limit=1`, doomed));
      await sleep(1000);
      stop.abort();
      const samples = await load;
      const statuses = countBy(samples.map((s) => String(s.status)));
      const wrongAnswers = samples.filter((s) => s.status !== 200).length + revokedSamples.filter((s) => s.startedAt > revokedAt && s.status === 200).length;
      const failures = [
        ...(wrongAnswers > 0 ? [`${wrongAnswers} wrong answers (${JSON.stringify(statuses)})`] : []),
        ...(offStandbyMs === null || offStandbyMs > switchBoundMs ? [`reads left the stopped standby after ${offStandbyMs ?? 'never'} ms (bound ${switchBoundMs})`] : []),
        ...(backOnStandbyMs === null ? ['reads did not come back to the standby'] : []),
      ];
      return { clients: options.clients, requests: samples.length, wrongAnswers, statuses, offStandbyMs, revocationWhileDownMs, backOnStandbyMs, failures };
    })();

    // ── Replay paused until the lag passes the bound, then resumed ────────────────────────────
    log('read replicas: replay paused on the standby until the lag passes the bound');
    const pausedFigures = await (async (): Promise<ReplayPausedFigures> => {
      if ((await until(() => everywhere(true), 30_000)) === null) throw new Error('the standby is not in use before the pause');
      const doomed = await issue();
      const stop = new AbortController();
      const load = runLoad({ bases, path: '/v1/orders?limit=5', key, clients: Math.min(8, options.clients), stop: stop.signal });
      await cluster.pauseReplay();
      await sleep(200);
      // The lag starts when the primary's WAL first moves past where the standby's replay stopped
      // (this append, or any earlier write): watched every 10 ms, the last time it had not moved
      // yet is the reference (so the delay measured is an upper bound).
      const paused = BigInt(await standbyAdmin.oneFirst(sql.type(lsnRow)`SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text AS lsn`));
      let notMovedAt = performance.now();
      const walMoved = (async () => {
        for (;;) {
          const at = performance.now();
          const current = BigInt(await primary.oneFirst(sql.type(lsnRow)`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`));
          if (current > paused) return;
          notMovedAt = at;
          await sleep(10);
        }
      })();
      await consoleActions.placeOrder({ workspaceId: tenant.workspaceId });
      await walMoved;
      const appendedAt = performance.now();
      // Committed while the standby is paused: waits until the steward has taken it out of the synchronous set.
      const revoking = revoke(doomed);
      let largestLagMs = 0;
      const offAt = await (async () => {
        while (performance.now() - appendedAt < maxLagMs + 15_000) {
          const states = await standbyStates();
          for (const state of states) largestLagMs = Math.max(largestLagMs, state?.lagMs ?? 0);
          if (states.every((state) => state?.inUse === false)) return performance.now();
          await sleep(25);
        }
        return undefined;
      })();
      const revocationWhilePausedMs = await revoking;
      const revokedAt = performance.now();
      const revokedAnswers = await Promise.all(bases.map((base) => request(`${base}/v1/orders?limit=1`, doomed)));
      await cluster.resumeReplay();
      const backOnStandbyMs = await until(() => everywhere(true), 30_000);
      stop.abort();
      const samples = await load;
      const offAfterBoundMs = offAt === undefined ? null : Math.max(0, Math.round(offAt - (notMovedAt + maxLagMs)));
      const wrongAnswers = samples.filter((s) => s.status !== 200).length + revokedAnswers.filter((s) => s.startedAt > revokedAt && s.status === 200).length;
      const failures = [
        ...(wrongAnswers > 0 ? [`${wrongAnswers} wrong answers`] : []),
        ...(offAfterBoundMs === null || offAfterBoundMs > switchBoundMs ? [`reads left the paused standby ${offAfterBoundMs ?? 'never'} ms after the lag passed the bound (bound ${switchBoundMs})`] : []),
        ...(backOnStandbyMs === null ? ['reads did not come back to the standby after resume'] : []),
      ];
      return { maxLagMs, offAfterBoundMs, largestLagMs, revocationWhilePausedMs, backOnStandbyMs, wrongAnswers, failures };
    })();

    // ── A replay and switch while the standby serves reads ────────────────────────────────────
    log('read replicas: projections replay (orders) and switch while the standby serves reads');
    const switchFigures = await (async (): Promise<ReplaySwitchFigures> => {
      if ((await until(() => everywhere(true), 30_000)) === null) throw new Error('the standby is not in use before the replay');
      const stop = new AbortController();
      const load = runLoad({ bases, path: '/v1/orders?limit=5', key, clients: options.clients, stop: stop.signal });
      const inUse: boolean[] = [];
      let replaying = true;
      const sampler = (async () => {
        while (replaying) {
          inUse.push(...(await standbyStates()).map((state) => state?.inUse === true));
          await sleep(100);
        }
      })();
      const started = performance.now();
      const replayed = await runCli(['projections', 'replay', '--projection', 'orders'], env, 300_000);
      const replaySeconds = Math.round((performance.now() - started) / 100) / 10;
      await cluster.caughtUp();
      await sleep(1000);
      replaying = false;
      await sampler;
      stop.abort();
      const samples = await load;
      const non200 = samples.filter((s) => s.status !== 200).length;
      const standbyInUseShare = inUse.length === 0 ? 0 : Math.round((inUse.filter(Boolean).length / inUse.length) * 100) / 100;
      const failures = [
        ...(replayed.code === 0 ? [] : [`projections replay failed: ${replayed.stderr.slice(-500)}`]),
        ...(non200 > 0 ? [`${non200} answers other than 200 during the replay and switch`] : []),
        ...(standbyInUseShare < 0.9 ? [`the standby served reads in only ${standbyInUseShare * 100}% of the samples during the replay`] : []),
      ];
      return { requests: samples.length, non200, standbyInUseShare, replaySeconds, failures };
    })();

    return {
      standbyStop: stopFigures,
      replayPaused: pausedFigures,
      replaySwitch: switchFigures,
      revocationMs,
      failures: [...stopFigures.failures.map((f) => `standbyStop: ${f}`), ...pausedFigures.failures.map((f) => `replayPaused: ${f}`), ...switchFigures.failures.map((f) => `replaySwitch: ${f}`)],
    };
  } finally {
    await Promise.all(services.map((service) => service.stop().catch(() => null)));
    await eventStore.close();
    await standbyAdmin.end();
    await primary.end();
    await cluster.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
