import { createHash, randomUUID } from 'node:crypto';
import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { newEvent, streams } from '../../src/events/index.js';
import { failingPuts, heldBuilds } from '../support/failingBlobStore.js';
import { fixedClock } from '../../src/platform/clock.js';
import { sql } from '../../src/platform/sql.js';
import { testAsOf, type ApiTestBed } from '../support/apiTestBed.js';
import { useApiBed } from '../support/useApiBed.js';
import { eventually } from '../support/eventually.js';
import { redisProxy } from '../support/redisProxy.js';
import { startS3Server, useS3Credentials, type S3TestServer } from '../support/s3Server.js';
import { testRedisUrl } from '../support/services.js';
import { minute, postExport, requestExport, poll, pollUntilReady, download, briefing, parseCsv, auditOf, jobRows, checkWholeFlow, type Json } from './exportFlows.js';

describe.each([
  { queue: 'in-process', storage: 'local' },
  { queue: 'bullmq', storage: 'local' },
  { queue: 'in-process', storage: 's3' },
  { queue: 'bullmq', storage: 's3' },
] as const)('export flow: $queue queue, $storage files', ({ queue, storage }) => {
  let bed: ApiTestBed;
  let s3: S3TestServer | undefined;
  let restoreCredentials: (() => void) | undefined;
  let key: string;
  let prefix: string;
  // Local links are checked with the API's clock, so the seeded day can be used; S3 checks links
  // against real time, so those beds run on (a fixed copy of) the present.
  const clock = fixedClock(storage === 'local' ? new Date(Date.parse(testAsOf) + 9.5 * 3_600_000) : new Date());

  beforeAll(async () => {
    if (storage === 's3') {
      s3 = await startS3Server(`exports-${randomUUID().slice(0, 8)}`);
      restoreCredentials = useS3Credentials();
    }
  });
  afterAll(async () => {
    await s3?.close();
    restoreCredentials?.();
  });
  const given = useApiBed({ scopes: ['analytics:read'], bed: () => ({ clock, ...(queue === 'bullmq' ? { redisUrl: testRedisUrl } : {}), ...(s3 ? { env: s3.env } : {}) }) });
  beforeAll(() => {
    ({ bed, key } = given);
    prefix = key.slice(0, 12);
  });

  test('the composition uses the queue and store of the settings', () => {
    expect(bed.exports.queueKind).toBe(queue);
    expect(bed.exports.storeKind).toBe(storage);
  });

  test('POST → pending → ready; the plain download matches checksum and size and is the briefing at build time', async () => {
    await checkWholeFlow(bed, key, prefix, clock);
  });

  test('an empty body asks for the daily briefing, with English labels by default', async () => {
    const exportId = await requestExport(bed, key);
    const { job } = await pollUntilReady(bed, key, exportId);
    expect(job.period).toBe('daily');
    const file = await download(job.downloadUrl ?? '');
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="management-briefing-daily.csv"');
    const rows = parseCsv(file.bytes.subarray(3).toString('utf8'));
    expect(rows.some((row) => row[2] === 'Orders not yet dispatched')).toBe(true);
  });

  test('a link stops working 5 minutes after the poll that returned it; a new poll gives a working one', async () => {
    const exportId = await requestExport(bed, key);
    const { job } = await pollUntilReady(bed, key, exportId);
    if (storage === 'local') {
      clock.advance(5 * minute + 1000);
      const expired = await download(job.downloadUrl ?? '');
      expect(expired.status).toBe(404);
      expect(expired.bytes.toString('utf8')).not.toContain('metric,');
      const fresh = await poll(bed, key, exportId);
      expect((await download(fresh.downloadUrl ?? '')).status).toBe(200);
    } else {
      // S3 judges expiry by real time: a link issued as of 6 minutes ago is refused by the server.
      const issuedEarlier = await bed.exports.service?.store.link(
        { key: new URL(job.downloadUrl ?? '').pathname.split('/').slice(2).join('/'), fileName: 'management-briefing-daily.csv', contentType: 'text/csv; charset=utf-8' },
        new Date(Date.now() - 6 * minute),
      );
      const refused = await download(issuedEarlier?.url ?? '');
      expect(refused.status).toBe(403);
      expect(refused.bytes.toString('utf8')).not.toContain('metric,');
      expect((await download(job.downloadUrl ?? '')).status).toBe(200);
    }
  });
});

describe('export jobs (in-process queue, local files)', () => {
  let bed: ApiTestBed;
  let key: string;
  let otherKey: string;
  let prefix: string;
  const clock = fixedClock(new Date(Date.parse(testAsOf) + 9.5 * 3_600_000));
  // Failures are injected into one export's file only, and its runs held until the test lets them
  // go: builds other tests left running (or retrying) neither take the failure nor race the test.
  const storage = failingPuts();
  const builds = heldBuilds();

  const given = useApiBed({ scopes: ['analytics:read'], bed: { clock, wrapExportStore: storage.wrap, wrapExportProcessor: builds.wrap } });
  beforeAll(async () => {
    ({ bed, key } = given);
    otherKey = await bed.issueKey(given.otherTenant, ['analytics:read']);
    prefix = key.slice(0, 12);
  });

  /** Requests an export whose first `failures` file writes fail, armed before its first run starts. */
  const requestFailingExport = async (failures: number): Promise<string> => {
    const releaseFirstRuns = builds.hold((_, attempt) => attempt.number === 1);
    try {
      const exportId = await requestExport(bed, key);
      storage.failFor(exportId, failures);
      return exportId;
    } finally {
      releaseFirstRuns();
    }
  };

  test('a build that fails is marked failed with processing_error, retried automatically, and ends ready keeping the error', async () => {
    // The retry waits until the test has seen the job failed (else it may come and go between two polls).
    let exportId = '';
    const releaseRetry = builds.hold((task, attempt) => task.exportId === exportId && attempt.number > 1);
    try {
      exportId = await requestFailingExport(1);
      const failed = await eventually(async () => {
        const polled = await poll(bed, key, exportId);
        expect(polled).toMatchObject({ status: 'failed', error: 'processing_error' });
        return polled;
      });
      expect(failed.downloadUrl).toBeUndefined();
    } finally {
      releaseRetry();
    }
    const { job } = await pollUntilReady(bed, key, exportId);
    expect(job).toMatchObject({ status: 'ready', error: 'processing_error' });
    const file = await download(job.downloadUrl ?? '');
    expect(createHash('sha256').update(file.bytes).digest('hex')).toBe(job.checksum);
    expect((await auditOf(bed, exportId)).map((entry) => [entry.action, entry.details.attempt ?? null, entry.details.willRetry ?? null])).toEqual([
      ['export.requested', null, null],
      ['export.failed', 1, true],
      ['export.ready', 2, null],
    ]);
    expect(bed.logs.some((line) => line.includes('export build failed') && line.includes(exportId))).toBe(true);
  });

  test('a build that fails every time ends failed after three runs', async () => {
    const exportId = await requestFailingExport(3);
    // The third failure is final: the job says failed once its audit line is written.
    await eventually(async () => {
      expect((await auditOf(bed, exportId)).filter((entry) => entry.action === 'export.failed')).toHaveLength(3);
      expect(await poll(bed, key, exportId)).toMatchObject({ status: 'failed', error: 'processing_error' });
    });
    expect((await auditOf(bed, exportId)).filter((entry) => entry.action === 'export.failed').map((entry) => entry.details.willRetry)).toEqual([true, true, false]);
    expect(storage.pendingFor(exportId)).toBe(0);
  });

  test('the CSV quotes and escapes labels taken from the data (an item renamed with commas, quotes and a line break)', async () => {
    const { figures } = await briefing(bed, key, 'weekly', 'en');
    const consumed = figures.find((f) => f.metric === 'CONSUMPTION_TREND' && f.dimension !== undefined);
    if (consumed?.dimension === undefined) throw new Error('the seeded week has no consumption');
    const tenantId = given.tenant.workspaceId;
    const name = '=cmd|"/c calc"!A0, "gloves"\nsize M';
    await bed.eventStore.append(
      streams.item(tenantId, consumed.dimension),
      [newEvent('CatalogItemRevised', { itemId: consumed.dimension, name }, { eventId: randomUUID(), tenantId, occurredAt: clock.now().toISOString() })],
      'any',
    );
    await bed.settle();
    const exportId = await requestExport(bed, key, { period: 'weekly' });
    const { job } = await pollUntilReady(bed, key, exportId);
    const text = (await download(job.downloadUrl ?? '')).bytes.subarray(3).toString('utf8');
    expect(text).toContain(`,"Consumption: =cmd|""/c calc""!A0, ""gloves""\nsize M",`);
    const row = parseCsv(text).find((cells) => cells[1] === consumed.dimension);
    expect(row?.[2]).toBe(`Consumption: ${name}`);
  });

  test.each([
    ['not JSON', '{"period":', 'body'],
    ['a period that is not documented', '{"period":"monthly"}', 'period'],
    ['a null period', '{"period":null}', 'period'],
    ['another field', '{"period":"daily","format":"xlsx"}', '"period"'],
    ['an array', '[]', '"period"'],
    ['a string', '"daily"', '"period"'],
  ])('%s: 400 common.invalid_request and no job', async (_case, body, detailHint) => {
    const before = await jobRows(bed);
    const response = await postExport(bed, key, { body });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'common.invalid_request', instance: '/v1/analytics/exports' });
    expect(String((response.body as Json).detail)).toMatch(detailHint === 'body' ? /JSON/ : detailHint === 'period' ? /daily or weekly/ : /"period"/);
    expect(await jobRows(bed)).toBe(before);
  });

  test('the body is read as JSON whatever its Content-Type; a blank body is the default', async () => {
    expect((await postExport(bed, key, { body: '{"period":"weekly"}', headers: { 'content-type': 'text/plain' } })).status).toBe(202);
    const blank = await postExport(bed, key, { body: '  \r\n' });
    expect(blank.status).toBe(202);
    expect((blank.body as Json).period).toBe('daily');
  });

  test('without analytics:read the export is refused (403) and nothing is created', async () => {
    const ordersOnly = await bed.issueKey(given.tenant, ['orders:read']);
    const before = await jobRows(bed);
    const response = await postExport(bed, ordersOnly, { body: '{}' });
    expect(response.status).toBe(403);
    expect((response.body as Json).code).toBe('api_keys.scope_missing');
    expect(await jobRows(bed)).toBe(before);
  });

  test('an unknown id, a malformed id and another workspace\'s job all answer the same 404', async () => {
    const exportId = await requestExport(bed, key);
    const answers = await Promise.all(
      [
        [otherKey, exportId],
        [key, randomUUID()],
        [key, 'not-an-export'],
        [key, exportId.toUpperCase()],
      ].map(([k, id]) => bed.request(`/v1/analytics/exports/${encodeURIComponent(id ?? '')}`, { key: k ?? '' })),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      const { requestId: _r, instance: _i, ...rest } = answer.body as Json;
      expect(rest).toEqual({
        type: 'https://problems.test.example/v1/common.not_found',
        title: expect.any(String),
        status: 404,
        detail: expect.any(String),
        code: 'common.not_found',
      });
    }
    expect(new Set(answers.map((a) => (a.body as Json).detail)).size).toBe(1);
    expect((await poll(bed, key, exportId)).exportId).toBe(exportId);
  });

  test('altered links reveal nothing: every change answers the same 404 as an unknown file', async () => {
    const exportId = await requestExport(bed, key);
    const { job } = await pollUntilReady(bed, key, exportId);
    const url = new URL(job.downloadUrl ?? '');
    const signature = url.searchParams.get('signature') ?? '';
    const flip = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
    const altered = [
      url.toString().replace(`signature=${signature}`, `signature=${flip(signature)}`),
      url.toString().replace(/expires=(\d+)/, (_m, expires: string) => `expires=${Number(expires) + 3600}`),
      url.toString().replace(job.exportId, randomUUID()),
      url.toString().replace('management-briefing-daily.csv', 'management-briefing-weekly.csv'),
      `${url.origin}${url.pathname}`,
      `${url.toString()}&signature=${signature}`,
      `${url.origin}/downloads/exports/x/y.csv?expires=1&signature=${signature}`,
    ];
    const bodies: Json[] = [];
    const requestIds: string[] = [];
    for (const link of altered) {
      const answer = await download(link);
      requestIds.push(answer.headers.get('x-request-id') ?? '');
      expect(answer.status, link).toBe(404);
      expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      const { requestId: _r, instance: _i, ...rest } = JSON.parse(answer.bytes.toString('utf8')) as Json;
      bodies.push(rest);
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(bodies[0]?.code).toBe('common.not_found');
    const valid = await download(url.toString());
    expect(valid.status).toBe(200);
    requestIds.push(valid.headers.get('x-request-id') ?? '');
    // A valid link is a credential: its signature never reaches the logs, the downloads' lines included.
    // Each download's access-log line is written once its answer is sent: wait for all of them.
    expect(requestIds.filter((id) => id === '')).toEqual([]);
    await eventually(() => {
      const logged = new Set(bed.logs.map((line) => JSON.parse(line) as Json).flatMap((line) => (line.msg === 'request' ? [line.requestId] : [])));
      expect(requestIds.filter((id) => !logged.has(id))).toEqual([]);
    });
    expect(bed.logs.some((line) => line.includes('/downloads/') && line.includes('signature=[redacted]'))).toBe(true);
    expect(bed.logs.filter((line) => line.includes(signature))).toEqual([]);
  });

  test('7 days after the request a job answers 404 at once; the maintenance then deletes it and its file', async () => {
    const exportId = await requestExport(bed, key);
    const { job } = await pollUntilReady(bed, key, exportId);
    const filesBefore = await readdir(path.join(bed.dataDir, 'exports'), { recursive: true });
    expect(filesBefore.some((name) => name.includes(exportId))).toBe(true);
    const requestedAt = clock.now().getTime();
    try {
      clock.set(new Date(requestedAt + 7 * 24 * 60 * minute - 1));
      expect((await poll(bed, key, exportId)).status).toBe('ready');
      clock.set(new Date(requestedAt + 7 * 24 * 60 * minute));
      const gone = await bed.request(`/v1/analytics/exports/${exportId}`, { key });
      expect(gone.status).toBe(404);
      expect((gone.body as Json).code).toBe('common.not_found');
      // The job row and file are still there until the maintenance runs.
      expect(await bed.database.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM export_jobs WHERE export_id = ${exportId}`)).toBe(1);
      const report = await bed.exports.runMaintenance?.();
      expect(report?.deletedJobs).toBeGreaterThanOrEqual(1);
      expect(await bed.database.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM export_jobs WHERE export_id = ${exportId}`)).toBe(0);
      const storedAt = path.join(bed.dataDir, 'exports', new URL(job.downloadUrl ?? '').pathname.replace(/^\/downloads\/exports\//, ''));
      await expect(access(storedAt)).rejects.toThrow();
      expect((await auditOf(bed, exportId)).map((entry) => [entry.actor, entry.action])).toEqual([
        [prefix, 'export.requested'],
        ['worker', 'export.ready'],
        ['retention', 'export.deleted'],
      ]);
    } finally {
      clock.set(new Date(requestedAt));
    }
  });

  test('the maintenance deletes evidence no answer carried within its retention (90 days by default) and keeps the rest', async () => {
    await briefing(bed, key, 'daily', 'en');
    const count = () => bed.database.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM analytics_evidence`);
    const before = await count();
    expect(before).toBeGreaterThan(0);
    await bed.database.pool.query(sql.typeAlias('void')`
      UPDATE analytics_evidence SET last_served_at = ${new Date(clock.now().getTime() - 91 * 24 * 60 * minute).toISOString()}
      WHERE evidence_id IN (SELECT evidence_id FROM analytics_evidence ORDER BY evidence_id LIMIT 3)
    `);
    const report = await bed.exports.runMaintenance?.();
    expect(report?.deletedEvidence).toBe(3);
    expect(await count()).toBe(before - 3);
  });

  test('a job whose queue entry was lost is queued again by the maintenance and built', async () => {
    const tenantId = given.tenant.workspaceId;
    const exportId = randomUUID();
    const requestedAt = new Date(clock.now().getTime() - 10 * minute).toISOString();
    await bed.database.pool.query(sql.typeAlias('void')`
      INSERT INTO export_jobs (tenant_id, export_id, report_type, period, language, status, requested_by, requested_at, updated_at)
      VALUES (${tenantId}, ${exportId}, 'briefing', 'daily', 'pt', 'pending', ${prefix}, ${requestedAt}, ${requestedAt})
    `);
    const report = await bed.exports.runMaintenance?.();
    expect(report?.requeued).toBe(1);
    const { job } = await pollUntilReady(bed, key, exportId);
    const rows = parseCsv((await download(job.downloadUrl ?? '')).bytes.subarray(3).toString('utf8'));
    expect(rows.some((row) => row[2] === 'Pedidos ainda não despachados')).toBe(true);
  });
});

describe('export request while Redis is down (BullMQ queue)', () => {
  let bed: ApiTestBed;
  let key: string;
  let prefix: string;
  let proxy: Awaited<ReturnType<typeof redisProxy>>;

  beforeAll(async () => {
    proxy = await redisProxy();
    await proxy.start();
  });
  afterAll(async () => {
    await proxy?.stop();
  });
  const given = useApiBed({ scopes: ['analytics:read'], bed: () => ({ redisUrl: proxy.url }) });
  beforeAll(() => {
    ({ bed, key } = given);
    prefix = key.slice(0, 12);
  });

  test('500 common.internal_error, no exportId, no job left, schedule_failed in the audit trail and the log; accepted again once Redis is back', async () => {
    const ready = await requestExport(bed, key);
    expect((await pollUntilReady(bed, key, ready)).job.status).toBe('ready');
    const jobsBefore = await jobRows(bed);
    // What this test adds to the audit trail and the log (the partition test may have run first).
    const failuresBefore = await scheduleFailures();
    const logsBefore = bed.logs.length;

    await proxy.stop();
    const refused = await postExport(bed, key, { body: '{"period":"weekly"}' });
    expect(refused.status).toBe(500);
    const problem = refused.body as Json;
    expect(problem.code).toBe('common.internal_error');
    expect(problem).not.toHaveProperty('exportId');
    expect(refused.text).not.toMatch(/redis|bullmq|ECONNREFUSED|stream/i);
    expect(refused.headers.get('location')).toBeNull();
    expect(await jobRows(bed)).toBe(jobsBefore);
    const failures = await bed.database.pool.any(sql.type(z.object({ actor: z.string(), requestId: z.string().nullable(), details: z.record(z.unknown()) }))`
      SELECT actor, request_id AS "requestId", details FROM audit_trail WHERE action = 'export.schedule_failed' AND request_id = ${String(problem.requestId)}
    `);
    expect(failures).toEqual([{ actor: prefix, requestId: problem.requestId, details: { reason: 'schedule_failed', reportType: 'briefing', period: 'weekly' } }]);
    expect(await scheduleFailures()).toBe(failuresBefore + 1);
    const logged = bed.logs.slice(logsBefore).map((line) => JSON.parse(line) as Json).filter((line) => line.reason === 'schedule_failed');
    expect(logged).toHaveLength(1);
    expect(logged[0]?.requestId).toBe(problem.requestId);

    await proxy.start();
    const accepted = await eventually(async () => {
      const answer = await postExport(bed, key);
      expect(answer.status).toBe(202);
      return answer;
    });
    const exportId = String((accepted.body as Json).exportId);
    expect((await pollUntilReady(bed, key, exportId)).job.status).toBe('ready');
  });

  test('Redis partitioned (silent, nothing refused): answered during the partition, 500 with schedule_failed (the enqueue gave up on its own bound, not the request deadline), no job left', async () => {
    const jobsBefore = await jobRows(bed);
    const failuresBefore = await scheduleFailures();
    proxy.partition();
    try {
      const refused = await postExport(bed, key, { body: '{"period":"weekly"}' });
      expect(refused.status).toBe(500);
      expect((refused.body as Json).code).toBe('common.internal_error');
      expect(await jobRows(bed)).toBe(jobsBefore);
      expect(await scheduleFailures()).toBe(failuresBefore + 1);
    } finally {
      proxy.heal();
      await proxy.start();
    }
    await eventually(async () => expect((await postExport(bed, key)).status).toBe(202));
  });

  async function scheduleFailures(): Promise<number> {
    return bed.database.pool.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*)::int AS count FROM audit_trail WHERE action = 'export.schedule_failed'`);
  }
});
