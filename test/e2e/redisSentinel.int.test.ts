import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { redisFailover } from '../../drill/redisFailover.js';
import { createDatabasePool } from '../../src/platform/db.js';
import { runCli, startCli } from '../support/cli.js';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { sentinelClusterUnavailable, startSentinelCluster, type SentinelCluster } from '../support/sentinelCluster.js';
import { services } from '../support/services.js';

// A master, a replica and three Sentinels of the test's own (test/support/sentinelCluster.ts),
// and the service on them through REDIS_URL=redis+sentinel://…: an API process (with the
// projector) and two export workers. The master is SIGKILLed while reads and export requests go on.

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const unavailable = sentinelClusterUnavailable();
if (unavailable !== undefined && !inCi) process.stderr.write(`\n[tests] Redis Sentinel skipped: ${unavailable}\n`);

type Started = Awaited<ReturnType<typeof startCli>>;

describe.runIf(services.postgres && (inCi || unavailable === undefined))('the service on Redis with Sentinel', () => {
  let cluster: SentinelCluster;
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let key: string;
  let base: string;
  const processes: Started[] = [];

  beforeAll(async () => {
    cluster = await startSentinelCluster();
    database = await createPostgresTestDatabase({ migrated: false });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-sentinel-e2e-'));
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: cluster.url,
      EXPORT_QUEUE_NAME: `test-exports-${randomBytes(6).toString('hex')}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    const seeded = await runCli(['seed', '--tenants', '1', '--seed', '3', '--as-of', '2026-11-01'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const tenant = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()) })) }).parse(JSON.parse(seeded.stdout)).tenants[0];
    if (tenant === undefined) throw new Error('the seed made no tenant');
    const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', tenant.memberIds[0] ?? '', '--scopes', 'orders:read,analytics:read'], env);
    expect(issued.code, issued.stderr).toBe(0);
    key = z.object({ key: z.string() }).parse(JSON.parse(issued.stdout)).key;

    const api = await startCli(['serve', '--port', '0', '--roles', 'api,projector'], env, /"port":(\d+),"roles":\["api","projector"\],"msg":"serving"/);
    processes.push(api);
    for (let i = 0; i < 2; i += 1) processes.push(await startCli(['serve', '--port', '0', '--roles', 'worker'], env, /"roles":\["worker"\],"msg":"serving"/));
    base = `http://127.0.0.1:${/"port":(\d+),"roles":\["api","projector"\]/.exec(api.output())?.[1] ?? ''}`;
    const waited = await runCli(['projections', 'wait', '--timeout', '60'], env);
    expect(waited.code, waited.stderr).toBe(0);
    await eventually(async () => expect((await fetch(`${base}/v1/orders?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status, 'the key accepted').toBe(200), { timeoutMs: 60_000 });
  });

  afterAll(async () => {
    for (const started of processes.splice(0)) await started.stop();
    await cluster?.close();
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  // Bounded by Sentinel's own timings: 5 s before the master is declared down, then the election.
  test('the master SIGKILLed mid-export: reads never fail, an export POST is acknowledged or refused with 500 at once, no job lost or built twice, budgets hold, the workers go on', { timeout: 240_000 }, async () => {
    const pool = await createDatabasePool(database.url, 2);
    try {
      const figures = await redisFailover({ sentinel: cluster, apiBases: [base], key, pool }, { clients: 4, exportEveryMs: 300 });
      process.stderr.write(`[redis failover] ${JSON.stringify(figures)}\n`);
      expect(figures.failures).toEqual([]);
      expect(figures).toMatchObject({ readErrors: 0, jobsLost: 0, jobsDoubled: 0, strayJobs: 0 });
      expect(figures.jobsInFlightAtKill).toBeGreaterThan(0);
      expect(figures.jobsAcknowledgedAfterPromotion).toBeGreaterThan(0);
      expect(Object.keys(figures.exportAnswers).filter((answer) => answer !== '202' && answer !== '500 common.internal_error')).toEqual([]);
      expect(figures.budget.overshoot).toBeLessThanOrEqual(figures.budget.bound);
      expect(figures.budget.grantedToExhausted).toBe(0);
      expect(figures.budget.errors).toBe(0);
    } finally {
      await pool.end();
    }
    for (const started of processes) expect(started.child.exitCode).toBeNull();
    // The workers noticed the outage and said when Redis was back, on the promoted replica.
    for (const worker of processes.slice(1)) await eventually(() => expect(worker.output()).toMatch(/"msg":"export worker: Redis reachable again"/));
  });
});
