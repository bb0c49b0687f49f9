import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { allProjections } from '../../projections/index.js';
import { createDatabasePool } from '../../src/platform/db.js';
import { markKeyRevoked } from '../../src/keys/keyStore.js';
import { runCli, startCli } from '../support/cli.js';
import { patroniClusterUnavailable, patroniReadLeaseMs, startPatroniCluster, type PatroniCluster } from '../support/patroniCluster.js';
import { eventually } from '../support/eventually.js';
import { pace } from '../support/pace.js';
import { readModelDigests } from '../support/projectionTestBed.js';

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const unavailable = patroniClusterUnavailable();
if (unavailable !== undefined && !inCi) process.stderr.write(`\n[tests] Patroni failover skipped: ${unavailable}\n`);

type Started = Awaited<ReturnType<typeof startCli>>;
const servingPattern = /"port":(\d+),"roles":\["api","projector"\],"msg":"serving"/;
const leaseMs = patroniReadLeaseMs;

let cluster: PatroniCluster;
let dataDir: string;
let api: Started | undefined;
let base = '';
let env: Record<string, string>;
let orderId = '';

type IssuedKey = { key: string; prefix: string };
let workspaceId = '';
let memberId = '';

async function issue(scopes: string): Promise<IssuedKey> {
  const issued = await runCli(['keys', 'issue', '--workspace', workspaceId, '--member', memberId, '--scopes', scopes], env);
  expect(issued.code, issued.stderr).toBe(0);
  return z.object({ key: z.string(), prefix: z.string() }).parse(JSON.parse(issued.stdout));
}

async function get(pathname: string, key: string): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(`${base}${pathname}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

async function postExport(key: string): Promise<number> {
  try {
    const response = await fetch(`${base}/v1/analytics/exports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** `clients` loops reading one order until stopped: each answer's status, and whether a 200 differs from `expected`. */
function readLoad(key: string, expected: string, clients: number) {
  const statuses: Record<string, number> = {};
  /** performance.now() of each answer that was not 200. */
  const failedAt: number[] = [];
  let wrong = 0;
  let answered = 0;
  let running = true;
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      const { status, body } = await get(`/v1/orders/${encodeURIComponent(orderId)}`, key);
      const code = status === 200 ? '200' : `${status} ${/"code":"([^"]+)"/.exec(body)?.[1] ?? ''}`.trim();
      statuses[code] = (statuses[code] ?? 0) + 1;
      answered += 1;
      if (status === 200 && body !== expected) wrong += 1;
      if (status !== 200) {
        failedAt.push(performance.now());
        await pace(50);
      }
    }
  });
  return {
    statuses,
    failedAt,
    wrong: () => wrong,
    /** Waits until the loops have had `count` more answers each than when called: the load ran on past that moment. */
    ranOn: async (count: number) => {
      const from = answered;
      await eventually(() => expect(answered - from).toBeGreaterThanOrEqual(count * clients), { timeoutMs: 60_000 });
    },
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Reads with a revoked key, `times` in a row: every answer must be 401. */
async function refusedEverywhere(key: string, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i += 1) statuses.push((await get('/v1/orders?limit=1', key)).status);
  return statuses;
}

describe.runIf(inCi || unavailable === undefined)('Patroni: lose the primary, keep serving', () => {
  beforeAll(async () => {
    cluster = await startPatroniCluster({ log: (line) => process.stderr.write(`[patroni] ${line}\n`) });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-patroni-api-'));
    env = { DATABASE_URL: cluster.url, DATA_DIR: dataDir };
    const seeded = await runCli(['seed', '--tenants', '1', '--seed', '7', '--days', '20', '--as-of', '2026-11-01'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const tenant = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()), orderIds: z.array(z.string()) })) }).parse(JSON.parse(seeded.stdout)).tenants[0];
    if (!tenant) throw new Error('no tenant');
    workspaceId = tenant.workspaceId;
    memberId = tenant.memberIds[0] ?? '';
    orderId = tenant.orderIds[0] ?? '';
    api = await startCli(
      ['serve', '--port', '0', '--roles', 'api,projector'],
      { ...env, READ_DATABASE_URL: cluster.url, READ_REPLICA_LEASE_MS: String(leaseMs), RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'info' },
      servingPattern,
    );
    base = `http://127.0.0.1:${servingPattern.exec(api.output())?.[1] ?? ''}`;
    const waited = await runCli(['projections', 'wait', '--timeout', '120'], env);
    expect(waited.code, waited.stderr).toBe(0);
  }, 400_000);

  afterAll(async () => {
    if (api && api.child.exitCode === null && api.child.signalCode === null) api.child.kill('SIGKILL');
    await cluster?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  test('the leader machine lost under reads: reads go on (at most 0.1 % 503, never 500 or a wrong answer); writes come back; a revocation right after is exact', async () => {
    const reader = await issue('orders:read,analytics:read');
    const doomed = await issue('orders:read');
    const expected = await get(`/v1/orders/${encodeURIComponent(orderId)}`, reader.key);
    expect(expected.status).toBe(200);
    // Reads on a leased standby before the loss.
    const readyz = async () => (await fetch(`${base}/readyz`).then((r) => r.json()).catch(() => ({}))) as { standbys?: { inUse: boolean }[] };
    await eventually(async () => expect(((await readyz()).standbys ?? []).some((s) => s.inUse)).toBe(true), { timeoutMs: 60_000 });

    const load = readLoad(reader.key, expected.body, 8);
    await eventually(() => expect(load.statuses['200'] ?? 0).toBeGreaterThanOrEqual(40));
    const leader = await cluster.leader();
    const { at: killedAt } = await cluster.kill(leader);
    // Writes: an export POST every 250 ms until one is accepted.
    let writesBackAt: number | undefined;
    const writeStatuses: Record<string, number> = {};
    const writer = (async () => {
      while (writesBackAt === undefined && performance.now() - killedAt < 120_000) {
        const status = await postExport(reader.key);
        writeStatuses[String(status)] = (writeStatuses[String(status)] ?? 0) + 1;
        if (status === 202) writesBackAt = performance.now();
        else await pace(250);
      }
    })();
    const promoted = await cluster.newLeader(leader);
    // Revoked as soon as the new leader takes writes: refused at once, wherever the read goes.
    // In this process (a command line would add its own start-up): the commit on the new primary and its wait for the leased standbys.
    const revocationStarted = performance.now();
    const revoker = await createDatabasePool(cluster.url, 1);
    try {
      expect(await markKeyRevoked(revoker, doomed.prefix, new Date().toISOString())).not.toBeNull();
    } finally {
      await revoker.end();
    }
    const revocationSeconds = (performance.now() - revocationStarted) / 1000;
    const afterRevocation = await refusedEverywhere(doomed.key, 30);
    await writer;
    await load.ranOn(20);
    await load.stop();

    const promotedAfterSeconds = (promoted.at - killedAt) / 1000;
    const since = (at: number | undefined) => (at === undefined ? 'none' : `${((at - killedAt) / 1000).toFixed(1)} s`);
    const writesBackAfterSeconds = writesBackAt === undefined ? null : (writesBackAt - killedAt) / 1000;
    process.stderr.write(
      `[patroni] leader ${leader.name} killed: ${promoted.leader.name} promoted after ${promotedAfterSeconds.toFixed(1)} s; writes back after ${writesBackAfterSeconds?.toFixed(1) ?? 'never'} s; reads failed from ${since(load.failedAt[0])} to ${since(load.failedAt.at(-1))} after the kill (lease ${leaseMs / 1000} s); reads ${JSON.stringify(load.statuses)}; writes ${JSON.stringify(writeStatuses)}; wrong ${load.wrong()}; revocation (connect, commit, wait for the leased standbys) ${revocationSeconds.toFixed(2)} s\n`,
    );
    expect(afterRevocation.filter((status) => status !== 401)).toEqual([]);
    expect(load.wrong()).toBe(0);
    expect(Object.keys(load.statuses).filter((code) => code !== '200' && code !== '503 common.service_unavailable')).toEqual([]);
    // Reads went on from the leased standby through the outage, then from the new primary: at most 0.1 % 503 (the goal is none).
    const answered = Object.values(load.statuses).reduce((sum, count) => sum + count, 0);
    expect(load.failedAt.length).toBeLessThanOrEqual(answered / 1000);
    // Writes came back (how soon, against ttl + 5 s, is the failover drill's target: `npm run drill failover`; the figure is printed above).
    expect(writesBackAfterSeconds).not.toBeNull();
    // Writes failed at once meanwhile, never hung: 503 when the key could not be checked, 500 (schedule_failed) when the job could not be stored.
    expect(Object.keys(writeStatuses).filter((status) => !['202', '500', '503'].includes(status))).toEqual([]);
    await cluster.restart(leader);
  }, 300_000);

  test('switchover under reads: a revocation committed just after it is exact, reads never 500', async () => {
    const reader = await issue('orders:read');
    const doomed = await issue('orders:read');
    const expected = await get(`/v1/orders/${encodeURIComponent(orderId)}`, reader.key);
    expect(expected.status).toBe(200);
    const load = readLoad(reader.key, expected.body, 8);
    const { from, to } = await cluster.switchover();
    const revoked = await runCli(['keys', 'revoke', '--prefix', doomed.prefix], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const afterRevocation = await refusedEverywhere(doomed.key, 30);
    await load.ranOn(20);
    await load.stop();
    process.stderr.write(`[patroni] switchover ${from.name} -> ${to.name}: reads ${JSON.stringify(load.statuses)}; wrong ${load.wrong()}\n`);
    expect(afterRevocation.filter((status) => status !== 401)).toEqual([]);
    expect(load.wrong()).toBe(0);
    expect(Object.keys(load.statuses).filter((code) => code !== '200' && code !== '503 common.service_unavailable')).toEqual([]);
  }, 300_000);

  test('after the failover and the switchover the projector went on exactly: every read table equals a clean rebuild', async () => {
    const waited = await runCli(['projections', 'wait', '--timeout', '120'], env);
    expect(waited.code, waited.stderr).toBe(0);
    const leader = await cluster.leader();
    const pool = await createDatabasePool(cluster.urlOf(leader), 1);
    try {
      const live = await readModelDigests(pool, allProjections);
      const replayed = await runCli(['projections', 'replay'], env, 300_000);
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(await readModelDigests(pool, allProjections)).toEqual(live);
    } finally {
      await pool.end();
    }
  }, 400_000);
});
