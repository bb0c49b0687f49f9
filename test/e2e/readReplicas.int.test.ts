import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { Registry } from 'prom-client';
import { allProjections } from '../../projections/index.js';
import { ordersProjection } from '../../projections/orders/projection.js';
import { createReadiness, registerReadReplicaMetrics } from '../../src/main/readiness.js';
import { projectionsReport } from '../../src/projecting/status.js';
import { createDatabasePool } from '../../src/platform/db.js';
import { sql } from '../../src/platform/sql.js';
import { replayProjections } from '../../src/projecting/replay.js';
import { checkSignInMember } from '../../src/console/signInMember.js';
import { issueSignInCode } from '../../src/mcp/signInCodes.js';
import { systemClock } from '../../src/platform/clock.js';
import { verifyEvidence } from '../../src/reporting/verifyEvidence.js';
import { signIn } from '../support/mcpClient.js';
import { textOf } from '../support/mcpSuite.js';
import type { ApiTestBed } from '../support/apiTestBed.js';
import { useApiBed } from '../support/useApiBed.js';
import { silentLogger } from '../support/databases.js';
import { expectRevocationActsUnderLoad, getWithKey } from '../support/revocationUnderLoad.js';
import { eventually } from '../support/eventually.js';
import { services } from '../support/services.js';
import { standbyClusterUnavailable, startStandbyCluster, type StandbyCluster } from '../support/standbyCluster.js';
import type { ReadRouter } from '../../src/platform/readReplicas.js';

// The API of these tests reads from a hot standby of a primary of their own (initdb,
// pg_basebackup -R, pg_ctl as the postgres user, in a temporary folder): revocation stays exact,
// what reads store goes to the primary, and a standby that stops or falls behind stops serving
// reads (how fast is logged, and measured by the drill) and serves them again once it is back.

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const unavailable = standbyClusterUnavailable();
if (unavailable !== undefined && !inCi) process.stderr.write(`\n[tests] read replicas skipped: ${unavailable}\n`);

const maxLagMs = 1500;
/** How late the standby applies commits in the revocation tests. */
const applyDelayMs = 300;

let cluster: StandbyCluster;
let bed: ApiTestBed;
let admin: Awaited<ReturnType<typeof createDatabasePool>>;

/** Waits until `condition` holds; answers how long that took (a figure for the log, not a bound). */
async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<number> {
  const started = performance.now();
  await eventually(async () => {
    if (!(await condition())) throw new Error(`${what}: not yet`);
  }, { timeoutMs: 60_000 });
  return performance.now() - started;
}

const standbyInUse = () => bed.router.standbys()[0]?.inUse === true;

/** Runs `read` (HTTP requests to the API) and says whether every read it routed went to a standby and none fell back to the primary. */
async function routedRead<T>(read: () => Promise<T>): Promise<{ value: T; standby: boolean }> {
  const router = bed.router as { route: ReadRouter['route'] };
  const route = router.route;
  const routes: boolean[] = [];
  const logsBefore = bed.logs.length;
  router.route = () => {
    const chosen = route();
    routes.push(chosen.standby);
    return chosen;
  };
  try {
    const value = await read();
    const fellBack = bed.logs.slice(logsBefore).some((line) => line.includes('failed on a standby'));
    return { value, standby: routes.length > 0 && routes.every(Boolean) && !fellBack };
  } finally {
    router.route = route;
  }
}
const synchronousNames = () => admin.oneFirst(sql.type(z.object({ names: z.string() }))`SELECT current_setting('synchronous_standby_names') AS names`);

/** What /readyz and /metrics say about the standby (through the functions `serve` uses). */
async function shown(): Promise<{ readyz: { inUse: boolean | undefined; summary: string | undefined }; metrics: Record<string, number> }> {
  const readiness = createReadiness({ database: bed.database.pool }, () => projectionsReport(bed.database.pool, bed.eventStore, allProjections), { servesReads: true, timeoutMs: 2000, router: bed.router });
  const answer = await readiness();
  const registry = new Registry();
  registerReadReplicaMetrics(registry, bed.router);
  const text = await registry.metrics();
  const metric = (name: string) => Number(new RegExp(`^supply_read_replica_${name}\\{standby="127\\.0\\.0\\.1:\\d+/supply"\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return {
    readyz: { inUse: answer.standbys?.[0]?.inUse, summary: answer.checks.standbys },
    metrics: { inUse: metric('in_use'), synchronous: metric('synchronous'), lagSeconds: metric('lag_seconds') },
  };
}

async function orderStatus(key: string, orderId: string): Promise<string> {
  const response = await fetch(`${bed.baseUrl}/v1/orders/${encodeURIComponent(orderId)}`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { status: string }).status;
}

describe.runIf(services.postgres && (inCi || unavailable === undefined))('reads from a hot standby', () => {
  beforeAll(async () => {
    cluster = await startStandbyCluster();
    admin = await createDatabasePool(cluster.primaryAdminUrl, 1);
  });
  afterAll(async () => {
    await admin?.end();
    await cluster?.close();
  });
  const given = useApiBed({ bed: () => ({ standby: cluster, env: { READ_REPLICA_MAX_LAG_MS: String(maxLagMs) } }) });
  beforeAll(() => {
    bed = given.bed;
  });

  test('the primary names the standby synchronous (the service keeps synchronous_standby_names) and reads go to it; past the bound they go to the primary, and back once it has caught up', async () => {
    await waitFor('standby in use', standbyInUse);
    expect(await synchronousNames()).toBe('ANY 1 ("standby1")');
    expect(bed.router.standbys()[0]).toMatchObject({ standby: expect.stringMatching(/^127\.0\.0\.1:\d+\/supply$/), replicationName: 'standby1', synchronous: true, inUse: true });
    expect(await shown()).toEqual({ readyz: { inUse: true, summary: '1 of 1 in use' }, metrics: { inUse: 1, synchronous: 1, lagSeconds: expect.any(Number) } });

    const { workspaceId, orderIds } = given.tenant;
    const key = await bed.issueKey(given.tenant, ['orders:read']);
    // An order that can still move on.
    let orderId = '';
    let before = '';
    for (const candidate of orderIds) {
      before = await orderStatus(key, candidate);
      if (!['delivered', 'cancelled', 'rejected', 'received', 'closed'].includes(before)) {
        orderId = candidate;
        break;
      }
    }
    expect(orderId).not.toBe('');
    // The change feed's cursor to keep, read from the standby.
    type FeedPage = { data: { orderId: string }[]; hasMore: boolean; syncCursor: string };
    const feed = async (cursor?: string): Promise<FeedPage> => {
      const response = await bed.request(`/v1/orders/changes?limit=200${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { key });
      expect(response.status).toBe(200);
      return response.body as FeedPage;
    };
    let page = await feed();
    while (page.hasMore) page = await feed(page.syncCursor);
    const saved = page.syncCursor;

    // Caught up before the pause: the lag then counts from no earlier than this.
    const caughtUpFrom = performance.now();
    await cluster.caughtUp();
    await cluster.pauseReplay();
    try {
      await bed.console.advanceOrder({ workspaceId, orderId });
      await bed.settle();
      // The primary has the new status; the standby (replay paused, lag still within the bound) serves the old one.
      const { value: onStandby, standby: servedByStandby } = await routedRead(() => orderStatus(key, orderId));
      const servedAt = performance.now();
      if (servedByStandby) {
        expect(onStandby).toBe(before);
        // The standby's feed has not seen the change yet: an empty page and the same cursor (never an earlier one).
        const { value: feedPage, standby: feedOnStandby } = await routedRead(() => feed(saved));
        if (feedOnStandby) expect(feedPage).toMatchObject({ data: [], hasMore: false, syncCursor: saved });
      } else {
        // Served by the primary: the new status, and only once the standby may have passed the bound
        // (or the watcher, on a loaded machine, had not observed it within freshMs).
        expect(onStandby).not.toBe(before);
        const reason = bed.router.standbys()[0]?.reason ?? 'in use again';
        process.stderr.write(`[read replicas] the read ${(servedAt - caughtUpFrom).toFixed(0)} ms after the pause went to the primary (${reason}): too late to see the standby's old answer\n`);
        if (servedAt - caughtUpFrom < maxLagMs - 200) expect(reason).not.toMatch(/behind/);
      }
      // Once the lag passes the bound, reads go to the primary.
      await waitFor('new status served', async () => (await orderStatus(key, orderId)) !== before);
      expect(standbyInUse()).toBe(false);
      expect(bed.router.standbys()[0]?.reason).toMatch(/behind|synchronous|catching up/);
      const whileBehind = await shown();
      expect(whileBehind).toMatchObject({ readyz: { inUse: false, summary: '0 of 1 in use (reads on the primary)' }, metrics: { inUse: 0 } });
      expect(whileBehind.metrics.lagSeconds).toBeGreaterThan(maxLagMs / 1000);
    } finally {
      await cluster.resumeReplay();
    }
    await waitFor('standby back in use', standbyInUse);
    expect(await orderStatus(key, orderId)).not.toBe(before);
    expect((await shown()).metrics.inUse).toBe(1);
    // Nothing missed: from the saved cursor, the standby's feed has the changed order.
    expect((await feed(saved)).data.map((item) => item.orderId)).toContain(orderId);
  });

  test('revocation under load with the reads on the standby: nothing started after the revocation committed is answered 200', async () => {
    await waitFor('standby in use', standbyInUse);
    // A standby that applies each commit 300 ms late: a revocation that did not wait for it would be missed there.
    await cluster.setApplyDelay(applyDelayMs);
    let revokeMs: number;
    try {
      revokeMs = await expectRevocationActsUnderLoad(bed, given.tenant);
      expect(standbyInUse()).toBe(true);
    } finally {
      await cluster.setApplyDelay(0);
    }
    expect(revokeMs).toBeGreaterThanOrEqual(applyDelayMs - 50);
    process.stderr.write(`[read replicas] a revocation committed (remote_apply to the standby) in ${revokeMs.toFixed(1)} ms under load\n`);
  });

  test('a cached key whose tenant is suspended is refused by the standby on the next request; reactivated, it reads again', async () => {
    await waitFor('standby in use', standbyInUse);
    const key = await bed.issueKey(given.otherTenant, ['inventory:read']);
    const emptyPage = '/v1/inventory/balances?catalogItemId=no-such-item';
    expect((await getWithKey(bed.baseUrl, emptyPage, key)).status).toBe(200);
    await cluster.setApplyDelay(applyDelayMs);
    try {
      await bed.console.suspendTenant({ workspaceId: given.otherTenant.workspaceId });
      await bed.settle();
      expect(await getWithKey(bed.baseUrl, emptyPage, key)).toEqual({ status: 401, rateLimitHeaders: false });
      await bed.console.reactivateTenant({ workspaceId: given.otherTenant.workspaceId });
      await bed.settle();
      expect((await getWithKey(bed.baseUrl, emptyPage, key)).status).toBe(200);
      expect(standbyInUse()).toBe(true);
    } finally {
      await cluster.setApplyDelay(0);
    }
  });

  test('an evidence id served from the standby is verifiable at once on the primary; an export created by POST is found by the very next GET', async () => {
    await waitFor('standby in use', standbyInUse);
    const key = await bed.issueKey(given.tenant, ['analytics:read']);
    const logsBefore = bed.logs.length;
    const exceptions = await bed.request('/v1/analytics/exceptions', { key });
    expect(exceptions.status).toBe(200);
    const { evidenceId } = exceptions.body as { evidenceId: string };
    const verified = await verifyEvidence(bed.database.pool, bed.eventStore, evidenceId);
    expect(verified.match).toBe(true);

    for (let i = 0; i < 5; i += 1) {
      const created = await bed.request('/v1/analytics/exports', { key, method: 'POST', body: '{"period":"daily"}' });
      expect(created.status).toBe(202);
      const location = created.headers.get('location') ?? '';
      const polled = await bed.request(location, { key });
      expect(polled.status).toBe(200);
    }
    // Written to the primary in the first place: no write was tried on the standby (and served again on the primary).
    expect(bed.logs.slice(logsBefore).filter((line) => line.includes('failed on a standby'))).toEqual([]);
    expect(standbyInUse()).toBe(true);
  });

  test('/mcp: the token is checked on the primary, tool reads come from the standby, and a tool answer\'s evidence id is verifiable at once', async () => {
    await waitFor('standby in use', standbyInUse);
    const { workspaceId, orderIds } = given.tenant;
    const memberId = given.tenant.memberIds[0] ?? '';
    const { client } = await signIn(bed.baseUrl, async () =>
      (await issueSignInCode({ pool: bed.database.pool, clock: systemClock, checkMember: (w, m) => checkSignInMember(bed.eventStore, w, m) }, { workspaceId, memberId })).signInCode,
    );
    try {
      const statusOf = async (orderId: string) => (JSON.parse(textOf(await client.callTool({ name: 'getOrder', arguments: { orderId } }))) as { status: string }).status;
      let orderId = '';
      let before = '';
      for (const candidate of orderIds) {
        before = await statusOf(candidate);
        if (!['delivered', 'cancelled', 'rejected', 'received', 'closed'].includes(before)) {
          orderId = candidate;
          break;
        }
      }
      const logsBefore = bed.logs.length;
      await cluster.pauseReplay();
      try {
        const appendedAt = performance.now();
        await bed.console.advanceOrder({ workspaceId, orderId });
        await bed.settle();
        const onStandby = await statusOf(orderId);
        // Served by the standby (its replay paused): the status before the change.
        if (performance.now() - appendedAt < maxLagMs - 200) expect(onStandby).toBe(before);
      } finally {
        await cluster.resumeReplay();
      }
      await waitFor('standby in use', standbyInUse);
      const exceptions = JSON.parse(textOf(await client.callTool({ name: 'getExceptions', arguments: {} }))) as { evidenceId: string };
      expect((await verifyEvidence(bed.database.pool, bed.eventStore, exceptions.evidenceId)).match).toBe(true);
      expect(bed.logs.slice(logsBefore).filter((line) => line.includes('failed on a standby'))).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test('a blue/green replay and switch is seen atomically on the standby: every answer during it is the same 200', async () => {
    await waitFor('standby in use', standbyInUse);
    const key = await bed.issueKey(given.tenant, ['orders:read']);
    const path = '/v1/orders?limit=20';
    const first = await bed.request(path, { key });
    expect(first.status).toBe(200);
    let done = false;
    const answers: { status: number; same: boolean }[] = [];
    const client = async () => {
      while (!done) {
        const answer = await bed.request(path, { key });
        answers.push({ status: answer.status, same: answer.text === first.text });
      }
    };
    const clients = Array.from({ length: 4 }, client);
    const result = await replayProjections({ pool: bed.database.pool, eventStore: bed.eventStore, projections: [ordersProjection], logger: silentLogger });
    await cluster.caughtUp();
    // A few more reads after the standby has replayed the switch.
    const after = answers.length;
    await waitFor('reads after the switch', () => answers.length > after + 20);
    done = true;
    await Promise.all(clients);
    expect(result.projections.map((p) => p.projection)).toEqual(['orders']);
    expect(answers.filter((a) => a.status !== 200 || !a.same)).toEqual([]);
    expect(standbyInUse()).toBe(true);
  });

  test('the standby stopped under load: no failed answer, reads move to the primary, a revocation still commits, and reads come back once it returns', async () => {
    await waitFor('standby in use', standbyInUse);
    const key = await bed.issueKey(given.tenant, ['orders:read']);
    const other = await bed.issueKey(given.tenant, ['orders:read']);
    let done = false;
    const statuses: number[] = [];
    const client = async () => {
      while (!done) statuses.push((await getWithKey(bed.baseUrl, '/v1/orders?limit=5', key)).status);
    };
    const clients = Array.from({ length: 8 }, client);
    await waitFor('load', () => statuses.length > 50);
    await cluster.stopStandby();
    const leftMs = await waitFor('reads off the standby', () => !standbyInUse());
    // With the standby down, the steward takes it out of the synchronous set: a revocation commits.
    const revoking = performance.now();
    await bed.revokeKey(other);
    const revokeMs = performance.now() - revoking;
    expect((await getWithKey(bed.baseUrl, '/v1/orders?limit=1', other)).status).toBe(401);
    expect(await synchronousNames()).toBe('');
    // It waited for the steward (2 s after the standby went): the figure is logged below.
    await cluster.startStandby();
    const backMs = await waitFor('standby back in use', standbyInUse);
    expect(await synchronousNames()).toBe('ANY 1 ("standby1")');
    done = true;
    await Promise.all(clients);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    process.stderr.write(`[read replicas] standby stopped: off it in ${leftMs.toFixed(0)} ms; revocation started once it was off committed in ${revokeMs.toFixed(0)} ms; back in use ${backMs.toFixed(0)} ms after its restart\n`);
  });
});
