import { describe, expect, test } from 'vitest';
import { approvalBands, cycleStages, metricKeys } from '../../analytics/definitions.js';
import { logStart } from '../../eventStore/eventStore.js';
import { issuableScopes } from '../../keys/scopes.js';
import { fixedClock } from '../../platform/clock.js';
import { sql } from '../../platform/sql.js';
import { z } from 'zod';
import { testAsOf } from '../../../test/support/apiTestBed.js';
import { apiClient, useApiBed } from '../../../test/support/useApiBed.js';

type Json = Record<string, unknown>;

// The seeded history ends at testAsOf (a UTC midnight); the API computes at 09:30 that day.
const clock = fixedClock(new Date(Date.parse(testAsOf) + 9.5 * 3_600_000));
const given = useApiBed({ scopes: ['analytics:read', 'orders:read'], bed: { tenants: 2, clock } });
const { get, allPages } = apiClient(given);

async function invalid(path: string): Promise<Json> {
  const response = await given.bed.request(path, { key: given.key });
  expect(response.status, `${path}: ${response.text}`).toBe(400);
  const body = response.body as Json;
  expect(body.code).toBe('common.invalid_request');
  return body;
}

function expectCommon(body: Json): void {
  expect(body.timezone).toBe('UTC');
  expect(body.freshness).toBe('live');
  expect(body.asOf).toBe(clock.now().toISOString());
  expect(body.evidenceId).toMatch(/^ev2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{32}$/);
  expect(typeof body.truncated).toBe('boolean');
}

const allOrders = () => allPages<Json>('/v1/orders');

describe('GET /v1/analytics/metrics/{metric}', () => {
  test.each(metricKeys)('%s answers with the common fields, its unit and a window only when it is a window metric', async (metric) => {
    const body = await get(`/v1/analytics/metrics/${metric}`);
    expectCommon(body);
    expect(body.metric).toBe(metric);
    expect(body.definitionVersion).toBe(1);
    const windowMetric = metric === 'ORDER_CYCLE_TIME' || metric === 'CONSUMPTION_TREND';
    if (windowMetric) expect(body.window).toEqual({ from: '2026-10-03T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z' });
    else expect(body).not.toHaveProperty('window');
  });

  test('an unknown metric, a bad date, an impossible date or from not before to is 400', async () => {
    expect((await invalid('/v1/analytics/metrics/low_stock')).detail).toContain('metric');
    await invalid('/v1/analytics/metrics/NOT_A_METRIC');
    expect((await invalid('/v1/analytics/metrics/LOW_STOCK?from=yesterday')).detail).toContain('"from"');
    await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=10:00');
    await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01%2012:00:00Z');
    await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01T23:59:60Z');
    await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?to=2026-02-30');
    expect((await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-02&to=2026-10-02')).detail).toContain('earlier');
    await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-03&to=2026-10-02');
    await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01&from=2026-10-02');
    // Both accepted forms of a day give the same window.
    const a = await get('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01&to=2026-10-08');
    const b = await get('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01T00:00:00Z&to=2026-10-08T00:00:00.000%2B00:00');
    expect(a.window).toEqual({ from: '2026-10-01T00:00:00.000Z', to: '2026-10-08T00:00:00.000Z' });
    expect(b.window).toEqual(a.window);
    expect(b.evidenceId).toBe(a.evidenceId);
  });

  test('a bad date names the forms accepted, an offset whose + arrived as a space gets the %2B hint, and forms outside them are refused', async () => {
    const bad = await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-13-01');
    expect(bad.detail).toBe(
      'The query parameter "from" must be an ISO 8601 date or date-time: a date such as 2026-10-01 (or the week date 2026-W40-4, the ordinal date 2026-274, or 20261001), optionally with a time of day and Z or an offset, such as 2026-10-01T14:30:00Z or 2026-10-01T14:30:00+02:00 (without Z or an offset the time is UTC).',
    );
    const spanish = await given.bed.request('/v1/analytics/consumption-trend?to=mañana', { key: given.key, headers: { 'accept-language': 'es' } });
    expect((spanish.body as Json).detail).toContain('"to" debe ser una fecha o una fecha y hora ISO 8601');
    // An unescaped + is a space by the time the query is read: the hint says to write %2B.
    for (const path of ['/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01T14:30:00+02:00', '/v1/analytics/consumption-trend?to=2026-10-08T00:00+0200']) {
      const plus = await invalid(path);
      expect(plus.detail).toMatch(/^The query parameter "(from|to)" has a space where a date-time has the \+ of its offset/);
      expect(plus.detail).toContain('2026-10-01T14:30:00%2B02:00');
    }
    const portuguese = await given.bed.request('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01T14:30+02', { key: given.key, headers: { 'accept-language': 'pt' } });
    expect((portuguese.body as Json).detail).toContain('Escreva o + como %2B');
    // Not dates here: reduced precision, an hour alone, 24:00, expanded years, mixed formats, a zone without a time.
    for (const value of ['2026', '2026-10', '2026-W40', '2026-10-01T14', '2026-10-01T24:00', '%2B002026-10-01', '2026-10-01T1430Z', '20261001T14:30Z', '2026-10-01Z', '2026-w40-4', '2026-10-01 14:30']) {
      expect((await invalid(`/v1/analytics/metrics/ORDER_CYCLE_TIME?from=${value}`)).detail, value).toMatch(/must be an ISO 8601 date or date-time/);
    }
  });

  test('an enum outside its values lists the values: order and delivery statuses, metric keys', async () => {
    expect((await invalid('/v1/orders?status=shipped')).detail).toBe(
      'The query parameter "status" must be one of: draft, submitted, pending_approval, approved, rejected, cancelled, allocated, picking, dispatched, delivered, exception, received, partially_fulfilled, closed.',
    );
    expect((await invalid('/v1/analytics/metrics/low_stock')).detail).toBe(`The metric must be one of: ${metricKeys.join(', ')}.`);
    const spanish = await given.bed.request('/v1/analytics/metrics/low_stock', { key: given.key, headers: { 'accept-language': 'es' } });
    expect((spanish.body as Json).detail).toBe(`La métrica debe ser una de: ${metricKeys.join(', ')}.`);
  });

  test('from and to take any ISO 8601 date or date-time; the window is the whole UTC days that cover them', async () => {
    const windowOf = async (query: string) => (await get(`/v1/analytics/metrics/ORDER_CYCLE_TIME?${query}`)).window;
    const days = { from: '2026-10-01T00:00:00.000Z', to: '2026-10-08T00:00:00.000Z' };
    // A time inside a day: from goes down to its day's start, to up to the next midnight.
    expect(await windowOf('from=2026-10-01T12:30:00Z&to=2026-10-07T08:00:00Z')).toEqual(days);
    // Offsets name instants: 01:00+02:00 is 23:00 UTC the day before; 23:30-03:00 is 02:30 UTC the day after.
    expect(await windowOf('from=2026-10-02T01:00:00%2B02:00&to=2026-10-06T23:30:00-03:00')).toEqual(days);
    // Basic format, a comma fraction, an hour alone, no offset (UTC).
    expect(await windowOf('from=20261001T0930Z&to=2026-10-07T23:59:59,999')).toEqual(days);
    // Ordinal and week dates: day 274 of 2026 is 1 October; Thursday of week 41 is 8 October.
    expect(await windowOf('from=2026-274&to=2026-W41-4')).toEqual(days);
    // Midnight UTC as the end excludes that day, whatever form it takes.
    expect(await windowOf('from=2026-10-01&to=2026-10-08T02:00:00%2B02:00')).toEqual(days);
    // Within one day: that day.
    expect(await windowOf('from=2026-10-05T08:00:00Z&to=2026-10-05T09:00:00Z')).toEqual({ from: '2026-10-05T00:00:00.000Z', to: '2026-10-06T00:00:00.000Z' });
    // Earlier is compared on the instants, before the window is widened to whole days.
    expect((await invalid('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-05T09:00:00Z&to=2026-10-05T08:00:00Z')).detail).toContain('earlier');
    // The same days give the same evidence, whichever instants named them.
    const a = await get('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01&to=2026-10-08');
    const b = await get('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-10-01T12:30:00Z&to=2026-10-07T08:00:00Z');
    expect(b.evidenceId).toBe(a.evidenceId);
  });

  test('the same figure at the same checkpoint names the same evidence, stored once with its first asOf; a new checkpoint another', async () => {
    const first = await get('/v1/analytics/metrics/LOW_STOCK');
    const again = await get('/v1/analytics/metrics/LOW_STOCK');
    expect(again.evidenceId).toBe(first.evidenceId);
    const storedRow = z.object({ subject: z.unknown(), recorded: z.string().transform((text) => JSON.parse(text) as unknown), tenantId: z.string(), asOf: z.string() });
    const stored = () =>
      given.bed.database.pool.one(sql.type(storedRow)`
        SELECT subject, recorded, tenant_id AS "tenantId", as_of AS "asOf" FROM analytics_evidence WHERE tenant_id = ${given.tenant.workspaceId} AND evidence_id = ${String(first.evidenceId)}
      `);
    const record = await stored();
    expect(record.tenantId).toBe(given.tenant.workspaceId);
    expect(record.subject).toEqual({ kind: 'metric', metric: 'LOW_STOCK', caps: { counts: 100_000 } });
    expect(record.recorded).toEqual({ metric: 'LOW_STOCK', value: first.value, unit: 'count', breakdown: [], truncated: false });

    clock.advance(60_000);
    const later = await get('/v1/analytics/metrics/LOW_STOCK');
    expect(later.asOf).not.toBe(first.asOf);
    expect(later.evidenceId).toBe(first.evidenceId);
    expect((await stored()).asOf).toBe(first.asOf);

    const tenant = given.tenant;
    await given.bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await given.bed.settle();
    const afterEvent = await get('/v1/analytics/metrics/LOW_STOCK');
    expect(afterEvent.asOf).toBe(later.asOf);
    expect(afterEvent.value).toBe(later.value);
    expect(afterEvent.evidenceId).not.toBe(later.evidenceId);
  });
});

describe('GET /v1/analytics/exceptions', () => {
  test('lists exceptions highest priority first, with drill-downs, and the evidence of their metrics', async () => {
    const body = await get<Json & { exceptions: Json[]; total: number }>('/v1/analytics/exceptions');
    expectCommon(body);
    expect(body.filters).toEqual({});
    expect(body.total).toBe(body.exceptions.length);
    expect(body.exceptions.length).toBeGreaterThan(0);
    const priorities = body.exceptions.map((e) => Number(e.priority));
    expect(priorities).toEqual([...priorities].sort((a, b) => b - a));
    const metricsSeen = new Set(body.exceptions.map((e) => e.metric));
    for (const metric of metricsSeen) {
      const figure = await get(`/v1/analytics/metrics/${String(metric)}`);
      const ofMetric = body.exceptions.filter((e) => e.metric === metric);
      expect(ofMetric.every((e) => e.evidenceId === figure.evidenceId)).toBe(true);
      expect(figure.value).toBe(ofMetric.length);
    }
    const again = await get<Json & { exceptions: Json[] }>('/v1/analytics/exceptions');
    expect(again.exceptions).toEqual(body.exceptions);
  });

  test('catalogItemId narrows the report to that item\'s stock exceptions', async () => {
    const all = await get<{ exceptions: Json[] }>('/v1/analytics/exceptions');
    const stock = all.exceptions.filter((e) => e.metric === 'LOW_STOCK' || e.metric === 'EXPIRING_STOCK');
    const itemId = String((stock[0]?.reference as Json | undefined)?.catalogItemId);
    expect(stock.length).toBeGreaterThan(0);
    expect(all.exceptions.length).toBeGreaterThan(stock.length);
    const narrowed = await get<{ exceptions: Json[]; filters: Json; total: number }>(`/v1/analytics/exceptions?catalogItemId=${encodeURIComponent(itemId)}`);
    expect(narrowed.filters).toEqual({ catalogItemId: itemId });
    expect(narrowed.exceptions).toEqual(stock.filter((e) => (e.reference as Json).catalogItemId === itemId));
    expect(narrowed.total).toBe(narrowed.exceptions.length);
    const none = await get<{ exceptions: Json[]; total: number }>('/v1/analytics/exceptions?catalogItemId=no-such-item');
    expect(none.exceptions).toEqual([]);
    expect(none.total).toBe(0);
    await invalid(`/v1/analytics/exceptions?catalogItemId=${'x'.repeat(201)}`);
  });
});

describe('approval backlog, clinic comparison, cycle time', () => {
  test('the backlog bands add up to the orders /v1/orders shows in pending_approval', async () => {
    const orders = await allOrders();
    const body = await get<Json & { bands: Json[]; totalPending: number }>('/v1/analytics/approval-backlog');
    expectCommon(body);
    expect(body.bands.map((b) => [b.band, b.minAgeHours, b.maxAgeHours])).toEqual(approvalBands.map((b) => [b.band, b.minAgeHours, b.maxAgeHours]));
    expect(body.bands.reduce((sum, b) => sum + Number(b.count), 0)).toBe(body.totalPending);
    expect(body.totalPending).toBe(orders.filter((o) => o.status === 'pending_approval').length);
    const metric = await get('/v1/analytics/metrics/APPROVAL_BACKLOG');
    expect(metric.evidenceId).toBe(body.evidenceId);
  });

  test('the clinic comparison counts the orders of each clinic as /v1/orders lists them', async () => {
    const orders = await allOrders();
    const body = await get<Json & { clinics: Json[] }>('/v1/analytics/clinics/comparison');
    expectCommon(body);
    expect(body.clinics.length).toBe(given.tenant.clinicIds.length);
    for (const clinic of body.clinics) {
      const own = orders.filter((o) => o.clinicId === clinic.clinicId);
      expect(clinic.totalOrders).toBe(own.length);
      expect(clinic.pendingApprovalOrders).toBe(own.filter((o) => o.status === 'pending_approval').length);
    }
    expect(JSON.stringify(body)).not.toMatch(/value|cost|currency/i);
  });

  test('cycle time reports the four stages, as the ORDER_CYCLE_TIME metric of the same window', async () => {
    const body = await get<Json & { stages: Json[] }>('/v1/analytics/cycle-time');
    expectCommon(body);
    expect(body.stages.map((s) => s.stage)).toEqual(cycleStages.map((s) => s.stage));
    expect(body.stages.some((s) => typeof s.averageHours === 'number' && Number(s.samples) > 0)).toBe(true);
    const metric = await get('/v1/analytics/metrics/ORDER_CYCLE_TIME');
    expect(metric.evidenceId).toBe(body.evidenceId);
    expect(metric.value).toBe(body.overallAverageHours);
  });
});

describe('GET /v1/analytics/consumption-trend', () => {
  test('weekly points add up to the daily ones of each series', async () => {
    const window = 'from=2026-10-05&to=2026-11-02';
    type Trend = { series: { catalogItemId: string; unitOfMeasure: string; points: { quantity: number; movements: number; periodStart: string; periodEnd: string }[] }[] } & Json;
    const daily = await get<Trend>(`/v1/analytics/consumption-trend?${window}`);
    const weekly = await get<Trend>(`/v1/analytics/consumption-trend?${window}&granularity=week`);
    expectCommon(daily);
    expect(daily.granularity).toBe('day');
    expect(weekly.granularity).toBe('week');
    expect(daily.series.length).toBeGreaterThan(0);
    const total = (t: Trend) => t.series.map((s) => [s.catalogItemId, s.unitOfMeasure, s.points.reduce((n, p) => n + p.quantity, 0), s.points.reduce((n, p) => n + p.movements, 0)]);
    expect(total(weekly)).toEqual(total(daily));
    for (const point of weekly.series.flatMap((s) => s.points)) {
      expect(point.periodStart >= '2026-10-05T00:00:00.000Z' && point.periodEnd <= '2026-11-02T00:00:00.000Z').toBe(true);
    }
    const metric = await get<Json & { breakdown: Json[] }>(`/v1/analytics/metrics/CONSUMPTION_TREND?${window}`);
    expect(metric.value).toBe(daily.series.reduce((n, s) => n + s.points.reduce((m, p) => m + p.movements, 0), 0));
  });

  test('granularity other than day or week, a window over 366 days or reversed is 400', async () => {
    expect((await invalid('/v1/analytics/consumption-trend?granularity=month')).detail).toContain('granularity');
    expect((await invalid('/v1/analytics/consumption-trend?from=2025-01-01&to=2026-01-03')).detail).toContain('366');
    await get('/v1/analytics/consumption-trend?from=2025-01-01&to=2026-01-02');
    await invalid('/v1/analytics/consumption-trend?from=2026-10-10&to=2026-10-01');
    await invalid('/v1/analytics/consumption-trend?to=nope');
  });
});

describe('dates at the edges of the calendar', () => {
  const paths = ['/v1/analytics/consumption-trend', '/v1/analytics/metrics/CONSUMPTION_TREND', '/v1/analytics/metrics/ORDER_CYCLE_TIME'];

  test.each([...paths, '/v1/analytics/metrics/LOW_STOCK'])('%s: a window reaching before 0001-01-01 or after 9999-12-31 (00:00 UTC) is 400 naming the range', async (path) => {
    for (const query of [
      'from=0000-01-01&to=0000-01-05',
      'from=0000-12-30&to=0001-01-02',
      'from=0001-01-01T01:00:00%2B02:00&to=0001-01-03',
      'from=9999-12-30&to=9999-12-31T23:59:59.999999999Z',
      'from=9999-12-31&to=9999-12-31T00:00:01Z',
      'to=9999-12-31T23:59:59.999999999Z',
    ]) {
      const body = await invalid(`${path}?${query}`);
      expect(body.detail, query).toContain('0001-01-01');
    }
  });

  test.each(paths)('%s: the first and the last days of the range answer', async (path) => {
    for (const granularity of ['day', 'week']) {
      const first = await get(`${path}?from=0001-01-01&to=0001-01-08&granularity=${granularity}`);
      const last = await get(`${path}?from=9999-12-24&to=9999-12-31&granularity=${granularity}`);
      expect(first.window).toEqual({ from: '0001-01-01T00:00:00.000Z', to: '0001-01-08T00:00:00.000Z' });
      expect(last.window).toEqual({ from: '9999-12-24T00:00:00.000Z', to: '9999-12-31T00:00:00.000Z' });
    }
  });
});

describe('GET /v1/analytics/briefing', () => {
  test('figures carry localized labels; values and evidence do not change with the language', async () => {
    const en = await get<Json & { figures: Json[] }>('/v1/analytics/briefing');
    const es = await get<Json & { figures: Json[] }>('/v1/analytics/briefing', { headers: { 'accept-language': 'es' } });
    const pt = await get<Json & { figures: Json[] }>('/v1/analytics/briefing', { headers: { 'accept-language': 'pt-BR' } });
    expectCommon(en);
    expect(en.period).toBe('daily');
    expect(en.window).toEqual({ from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z' });
    const strip = (b: { figures: Json[] }) => b.figures.map(({ label: _label, ...rest }) => rest);
    expect(strip(es)).toEqual(strip(en));
    expect(strip(pt)).toEqual(strip(en));
    expect(es.evidenceId).toBe(en.evidenceId);
    const low = (b: { figures: Json[] }) => b.figures.find((f) => f.metric === 'LOW_STOCK')?.label;
    expect([low(en), low(es), low(pt)]).toEqual(['Items below their reorder point', 'Artículos por debajo del punto de pedido', 'Itens abaixo do ponto de reposição']);
    const bands = en.figures.filter((f) => f.metric === 'APPROVAL_BACKLOG');
    expect(bands.map((f) => f.dimension)).toEqual(approvalBands.map((b) => b.band));
    expect(en.figures.filter((f) => f.metric === 'LOW_STOCK').every((f) => !('dimension' in f))).toBe(true);
  });

  test("each figure's evidence is that of its source metric; weekly covers seven days; a bad period is 400", async () => {
    const daily = await get<Json & { figures: Json[] }>('/v1/analytics/briefing?period=daily');
    for (const metric of ['LOW_STOCK', 'PENDING_ORDERS', 'APPROVAL_BACKLOG']) {
      const source = await get(`/v1/analytics/metrics/${metric}`);
      expect(daily.figures.filter((f) => f.metric === metric).every((f) => f.evidenceId === source.evidenceId)).toBe(true);
    }
    const cycle = await get('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-11-01&to=2026-11-02');
    expect(daily.figures.filter((f) => f.metric === 'ORDER_CYCLE_TIME').every((f) => f.evidenceId === cycle.evidenceId)).toBe(true);
    const weekly = await get('/v1/analytics/briefing?period=weekly');
    expect(weekly.window).toEqual({ from: '2026-10-26T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z' });
    expect((await invalid('/v1/analytics/briefing?period=monthly')).detail).toContain('daily or weekly');
  });
});

describe('what analytics never contain', () => {
  test('no cost, order value, patient reference or member name in any analytics answer', async () => {
    const names = new Set<string>();
    for (let from = logStart; ; ) {
      const page = await given.bed.eventStore.readAll(from, 5000);
      for (const event of page.events) {
        if (event.type === 'MemberJoined') names.add(String((event.data as { name: string }).name));
      }
      if (page.atHead || page.events.length === 0) break;
      from = page.next;
    }
    expect(names.size).toBeGreaterThan(0);
    const paths = [
      ...metricKeys.map((m) => `/v1/analytics/metrics/${m}`),
      '/v1/analytics/exceptions',
      '/v1/analytics/clinics/comparison',
      '/v1/analytics/consumption-trend?granularity=week',
      '/v1/analytics/approval-backlog',
      '/v1/analytics/cycle-time',
      '/v1/analytics/briefing?period=weekly',
    ];
    const forbiddenKeys = /"(cost|unitCost|currency|costStatus|patientRef|evaluatedValue|orderValue)"/;
    for (const path of paths) {
      const response = await given.bed.request(path, { key: given.key });
      expect(response.status).toBe(200);
      expect(response.text).not.toMatch(forbiddenKeys);
      for (const name of names) expect(response.text, `${path} holds the member name ${name}`).not.toContain(name);
    }
  });

  test('a key without analytics:read is refused with 403', async () => {
    const tenant = given.tenant;
    const other = await given.bed.issueKey(tenant, issuableScopes.filter((s) => s !== 'analytics:read'));
    const response = await given.bed.request('/v1/analytics/briefing', { key: other });
    expect(response.status).toBe(403);
  });
});
