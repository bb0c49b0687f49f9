import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { newEvent, streams } from '../../src/events/index.js';
import { fixedClock } from '../../src/platform/clock.js';
import { sql } from '../../src/platform/sql.js';
import { testAsOf } from '../support/apiTestBed.js';
import { apiClient, useApiBed } from '../support/useApiBed.js';
import { runCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';

type Json = Record<string, unknown>;
type Figure = { metric: string; dimension?: string; label: string; value: number | null; evidenceId: string };
type Briefing = Json & { evidenceId: string; figures: Figure[] };
type Exception = Json & { metric: string; reference: Json; evidenceId: string };
type Exceptions = Json & { total: number; truncated: boolean; exceptions: Exception[]; evidenceId: string };

/**
 * Evidence ids are content addresses of the figure, stored once; the exceptions report has one
 * total order; two members of a workspace hold keys of their own. Given the small seed, with the
 * API's clock moving between reads and no event appended unless a test says so.
 */
const clock = fixedClock(new Date(Date.parse(testAsOf) + 9.5 * 3_600_000));
const given = useApiBed({ scopes: ['analytics:read', 'inventory:read'], bed: { tenants: 2, clock }, bootTimeoutMs: 300_000 });
const client = apiClient(given);

/** A read of the API one moment later on its clock. */
function get<T = Json>(path: string, options: { key?: string; headers?: Record<string, string> } = {}): Promise<T> {
  clock.advance(1_500);
  return client.get<T>(path, options);
}

const evidenceRows = () => given.bed.database.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM analytics_evidence`);

/** figure key (metric and dimension) → evidence id */
function idsOf(figures: readonly Pick<Figure, 'metric' | 'dimension' | 'evidenceId'>[]): Map<string, string> {
  return new Map(figures.map((f) => [`${f.metric}/${f.dimension ?? ''}`, f.evidenceId]));
}

async function exportCsv(language: string): Promise<{ metric: string; dimension: string; evidenceId: string }[]> {
  const posted = await given.bed.request('/v1/analytics/exports', { key: given.key, method: 'POST', body: '{"period":"daily"}', headers: { 'accept-language': language } });
  expect(posted.status, posted.text).toBe(202);
  const exportId = String((posted.body as Json).exportId);
  const job = await eventually(async () => {
    const answer = (await given.bed.request(`/v1/analytics/exports/${exportId}`, { key: given.key })).body as Json;
    expect(answer.status, `export ${exportId}`).toBe('ready');
    return answer;
  });
  const text = Buffer.from(await (await fetch(String(job.downloadUrl))).arrayBuffer()).subarray(3).toString('utf8');
  // metric, dimension and evidenceId never hold a comma; the label between them may.
  return text
    .split('\r\n')
    .slice(1, -1)
    .map((line) => {
      const cells = line.split(',');
      return { metric: cells[0] ?? '', dimension: cells[1] ?? '', evidenceId: cells.at(-1) ?? '' };
    });
}

async function verify(evidenceId: string): Promise<Json> {
  const result = await runCli(['evidence', 'verify', evidenceId], { DATABASE_URL: given.bed.database.url });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Json;
}

/** Waits until the projections show the appended events (the LOW_STOCK figure changes). */
function lowStockOtherThan(value: unknown): Promise<Json> {
  return eventually(async () => {
    const body = await get('/v1/analytics/metrics/LOW_STOCK');
    expect(body.value, 'LOW_STOCK').not.toEqual(value);
    return body;
  });
}

describe('evidence ids name the figure', () => {
  test('with no new event every figure has one id in briefings read twice in en, es and pt and in the CSV; a LOW_STOCK change gives that figure a new id, and both verify', async () => {
    const reads: Briefing[] = [];
    for (const language of ['en', 'es', 'pt', 'en', 'es', 'pt']) reads.push(await get<Briefing>('/v1/analytics/briefing', { headers: { 'accept-language': language } }));
    const [first, ...others] = reads;
    if (!first) throw new Error('no briefing');
    expect(new Set(reads.map((r) => r.asOf)).size).toBe(reads.length);
    expect(new Set(reads.map((r) => r.figures.find((f) => f.metric === 'LOW_STOCK')?.label)).size).toBe(3);
    const ids = idsOf(first.figures);
    expect(ids.size).toBe(first.figures.length);
    for (const read of others) {
      expect(read.evidenceId).toBe(first.evidenceId);
      expect(idsOf(read.figures)).toEqual(ids);
    }
    // The metric's own operation, and the CSV export (built at its own asOf, in Spanish), give the same ids.
    const low = await get('/v1/analytics/metrics/LOW_STOCK');
    expect(low.evidenceId).toBe(ids.get('LOW_STOCK/'));
    const csv = await exportCsv('es');
    expect(csv.length).toBe(first.figures.length);
    expect(idsOf(csv.map((row) => ({ metric: row.metric, evidenceId: row.evidenceId, ...(row.dimension === '' ? {} : { dimension: row.dimension }) })))).toEqual(ids);

    // Stock arrives for an item that is low in one warehouse: LOW_STOCK changes, so does its id.
    const exceptions = await get<Exceptions>('/v1/analytics/exceptions');
    const lowLevel = exceptions.exceptions.find((e) => e.metric === 'LOW_STOCK')?.reference;
    if (!lowLevel) throw new Error('the seed has a low stock level');
    const boxId = `box_${randomUUID()}`;
    const envelope = () => ({ eventId: randomUUID(), tenantId: given.tenant.workspaceId, occurredAt: clock.now().toISOString() });
    await given.bed.eventStore.append(
      streams.box(given.tenant.workspaceId, boxId),
      [
        newEvent(
          'BoxRegistered',
          { boxId, code: 'BX-TEST-1', catalogItemId: String(lowLevel.catalogItemId), warehouseId: String(lowLevel.warehouseId), status: 'active', origin: { type: 'purchase' } },
          envelope(),
        ),
        newEvent(
          'StockMovementRecorded',
          {
            movementId: `mov_${randomUUID()}`,
            type: 'receive',
            boxId,
            catalogItemId: String(lowLevel.catalogItemId),
            quantityDelta: Number(lowLevel.reorderPoint) + 100,
            actorId: given.tenant.memberIds[0] ?? '',
            occurredAt: clock.now().toISOString(),
          },
          envelope(),
        ),
      ],
      'no_stream',
    );
    const after = await lowStockOtherThan(low.value);
    expect(after.value).toBe(Number(low.value) - 1);
    expect(after.evidenceId).not.toBe(low.evidenceId);
    const briefingAfter = await get<Briefing>('/v1/analytics/briefing', { headers: { 'accept-language': 'pt' } });
    expect(idsOf(briefingAfter.figures).get('LOW_STOCK/')).toBe(after.evidenceId);

    const old = await verify(String(low.evidenceId));
    const current = await verify(String(after.evidenceId));
    expect(old).toMatchObject({ match: true, recorded: { metric: 'LOW_STOCK', value: low.value } });
    expect(current).toMatchObject({ match: true, recorded: { metric: 'LOW_STOCK', value: after.value } });
    // Each record keeps the asOf it was first served at: the new figure's is the answer that first
    // carried its id; the old figure may have been served before this test (by another test of the
    // file), so its record is from this test's first read or earlier, never later.
    expect(typeof after.asOf).toBe('string');
    expect(current.asOf).toBe(after.asOf);
    expect(Date.parse(String(old.asOf))).toBeLessThanOrEqual(Date.parse(String(first.asOf)));
  }, 180_000);

  test('1 000 briefing reads add no evidence rows after the first', async () => {
    await get('/v1/analytics/briefing?period=weekly');
    const rows = await evidenceRows();
    let last: Briefing | undefined;
    for (let i = 0; i < 1_000; i += 1) {
      clock.advance(1_000);
      const response = await fetch(`${given.bed.baseUrl}/v1/analytics/briefing?period=weekly`, {
        headers: { authorization: `Bearer ${given.key}`, 'accept-language': ['en', 'es', 'pt'][i % 3] ?? 'en' },
      });
      expect(response.status).toBe(200);
      last = (await response.json()) as Briefing;
    }
    expect(await evidenceRows()).toBe(rows);
    expect(last?.figures.length).toBeGreaterThan(8);
  }, 300_000);

  test('an id handed out before content addressing (ev1) still resolves and verifies', async () => {
    const body = await get('/v1/analytics/metrics/PENDING_ORDERS');
    const legacyId = `ev1.${Buffer.from(given.tenant.workspaceId, 'utf8').toString('base64url')}.${'L'.repeat(32)}`;
    await given.bed.database.pool.query(sql.typeAlias('void')`
      INSERT INTO analytics_evidence (tenant_id, evidence_id, subject, definition_version, as_of, checkpoint_tx, checkpoint_seq, recorded, created_at, last_served_at)
      SELECT tenant_id, ${legacyId}, subject, definition_version, as_of, checkpoint_tx, checkpoint_seq, recorded, created_at, last_served_at
      FROM analytics_evidence WHERE tenant_id = ${given.tenant.workspaceId} AND evidence_id = ${String(body.evidenceId)}
    `);
    expect(await verify(legacyId)).toMatchObject({ evidenceId: legacyId, match: true, recorded: { metric: 'PENDING_ORDERS', value: body.value } });
  }, 120_000);

  test('retention goes by the last answer that carried an id: one still served is kept, one no longer served is deleted', async () => {
    const served = await get('/v1/analytics/metrics/EXPIRING_STOCK');
    const longAgo = new Date(clock.now().getTime() - 120 * 86_400_000).toISOString();
    const staleId = `ev1.${Buffer.from(given.tenant.workspaceId, 'utf8').toString('base64url')}.${'S'.repeat(32)}`;
    await given.bed.database.pool.query(sql.typeAlias('void')`
      INSERT INTO analytics_evidence (tenant_id, evidence_id, subject, definition_version, as_of, checkpoint_tx, checkpoint_seq, recorded, created_at, last_served_at)
      SELECT tenant_id, ${staleId}, subject, definition_version, as_of, checkpoint_tx, checkpoint_seq, recorded, ${longAgo}, ${longAgo}
      FROM analytics_evidence WHERE tenant_id = ${given.tenant.workspaceId} AND evidence_id = ${String(served.evidenceId)}
    `);
    // The served record was first stored long ago; the next answer that carries its id renews it.
    await given.bed.database.pool.query(sql.typeAlias('void')`
      UPDATE analytics_evidence SET created_at = ${longAgo}, last_served_at = ${longAgo} WHERE evidence_id = ${String(served.evidenceId)}
    `);
    const again = await get('/v1/analytics/metrics/EXPIRING_STOCK');
    expect(again.evidenceId).toBe(served.evidenceId);
    const report = await given.bed.exports.runMaintenance?.();
    expect(report?.deletedEvidence).toBe(1);
    const left = await given.bed.database.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT evidence_id AS id FROM analytics_evidence WHERE evidence_id IN (${String(served.evidenceId)}, ${staleId})
    `);
    expect(left).toEqual([served.evidenceId]);
  });
});

describe('exceptions in one total order', () => {
  test('read twice they are identical; narrowed by each item of the tenant they are exactly its stock exceptions, in the order of the full list', async () => {
    const full = await get<Exceptions>('/v1/analytics/exceptions');
    const again = await get<Exceptions>('/v1/analytics/exceptions');
    expect(again).toEqual({ ...full, asOf: again.asOf });
    expect(full.truncated).toBe(false);
    const stock = full.exceptions.filter((e) => e.metric === 'LOW_STOCK' || e.metric === 'EXPIRING_STOCK');
    expect(new Set(stock.map((e) => e.drillDownType))).toEqual(new Set(['catalog_item', 'box']));
    let narrowedSeen = 0;
    for (const itemId of given.tenant.itemIds) {
      const narrowed = await get<Exceptions>(`/v1/analytics/exceptions?catalogItemId=${encodeURIComponent(itemId)}`);
      const expected = stock.filter((e) => e.reference.catalogItemId === itemId);
      expect(narrowed.exceptions, itemId).toEqual(expected);
      expect(narrowed.total).toBe(expected.length);
      expect(narrowed.filters).toEqual({ catalogItemId: itemId });
      narrowedSeen += narrowed.exceptions.length;
    }
    expect(narrowedSeen).toBe(stock.length);
  }, 120_000);

  test('the order is total: priority first, then oldest detectedAt, then drill-down', async () => {
    const { exceptions } = await get<Exceptions>('/v1/analytics/exceptions');
    for (let i = 1; i < exceptions.length; i += 1) {
      const [a, b] = [exceptions[i - 1], exceptions[i]] as [Exception, Exception];
      const order =
        Number(b.priority) - Number(a.priority) ||
        String(a.detectedAt).localeCompare(String(b.detectedAt)) ||
        Buffer.compare(Buffer.from(String(a.drillDownType)), Buffer.from(String(b.drillDownType))) ||
        Buffer.compare(Buffer.from(String(a.drillDownId)), Buffer.from(String(b.drillDownId)));
      expect(order, `${JSON.stringify(a)} before ${JSON.stringify(b)}`).toBeLessThanOrEqual(0);
    }
  });
});

describe('seed roles', () => {
  test('keys of two members of one workspace: suspending one leaves the other working', async () => {
    const managers = given.tenant.members.filter((m) => m.status === 'active' && m.permissions.includes('integrations.manage'));
    expect(managers.length).toBeGreaterThanOrEqual(2);
    const [owner, admin] = managers as [(typeof managers)[number], (typeof managers)[number]];
    const ownerKey = await given.bed.issueKey(given.tenant, ['analytics:read'], owner.memberId);
    const adminKey = await given.bed.issueKey(given.tenant, ['analytics:read'], admin.memberId);
    expect((await given.bed.request('/v1/me', { key: adminKey })).status).toBe(200);
    await given.bed.console.suspendMember({ workspaceId: given.tenant.workspaceId, memberId: admin.memberId });
    await given.bed.settle();
    const refused = await given.bed.request('/v1/me', { key: adminKey });
    expect(refused.status).toBe(401);
    expect((refused.body as Json).code).toBe('api_keys.invalid');
    expect((await given.bed.request('/v1/me', { key: ownerKey })).status).toBe(200);
    expect((await given.bed.request('/v1/analytics/approval-backlog', { key: ownerKey })).status).toBe(200);
    // A member without orders.approve is there too (the assistant endpoint's tests need one).
    expect(given.tenant.members.some((m) => m.status === 'active' && !m.permissions.includes('orders.approve'))).toBe(true);
  });
});
