import { describe, expect, test } from 'vitest';
import { fixedClock } from '../../platform/clock.js';
import { testAsOf } from '../../../test/support/apiTestBed.js';
import { apiClient, useApiBed } from '../../../test/support/useApiBed.js';

type Json = Record<string, unknown>;

/**
 * The same seeded history read with tiny scan caps: every capped read reaches its cap, says so
 * with truncated: true, and returns a prefix (or a lower bound) of the uncapped answer.
 */
const clock = fixedClock(new Date(Date.parse(testAsOf) + 3_600_000));
const caps = {
  ANALYTICS_EXCEPTIONS_CAP: '3',
  ANALYTICS_COMPARISON_CAP: '1',
  ANALYTICS_TREND_CAP: '4',
  ANALYTICS_COUNT_CAP: '1',
  ANALYTICS_BACKLOG_CAP: '1',
};
const capped = useApiBed({ scopes: ['analytics:read'], bed: { tenants: 1, clock, env: caps } });
const uncapped = useApiBed({ scopes: ['analytics:read'], bed: { tenants: 1, clock } });

function both(path: string): Promise<[Json, Json]> {
  return Promise.all([apiClient(capped).get(path), apiClient(uncapped).get(path)]);
}

describe('scan caps', () => {
  test('the exceptions report lists the first 3 in order; total is what was found', async () => {
    const [small, full] = await both('/v1/analytics/exceptions');
    expect(full.truncated).toBe(false);
    expect((full.exceptions as Json[]).length).toBeGreaterThan(3);
    expect(small.truncated).toBe(true);
    const strip = (list: unknown) => (list as Json[]).map(({ evidenceId: _e, ...rest }) => rest);
    expect(strip(small.exceptions)).toEqual(strip(full.exceptions).slice(0, 3));
    expect(Number(small.total)).toBeGreaterThan(3);
    expect(Number(small.total)).toBeLessThanOrEqual(Number(full.total));
  });

  test('the clinic comparison lists the first clinic only', async () => {
    const [small, full] = await both('/v1/analytics/clinics/comparison');
    expect(full.truncated).toBe(false);
    expect(small.truncated).toBe(true);
    expect(small.clinics).toEqual((full.clinics as Json[]).slice(0, 1));
  });

  test('the consumption trend reads 4 daily rows: a prefix of the series', async () => {
    const path = '/v1/analytics/consumption-trend?from=2026-10-01&to=2026-11-02';
    const [small, full] = await both(path);
    type Series = { catalogItemId: string; points: Json[] };
    expect(full.truncated).toBe(false);
    expect(small.truncated).toBe(true);
    const points = (body: Json) => (body.series as Series[]).flatMap((s) => s.points.map((p) => ({ item: s.catalogItemId, ...p })));
    expect(points(small)).toEqual(points(full).slice(0, 4));
  });

  test('count metrics are lower bounds at the cap; the backlog counts the oldest pending approval', async () => {
    for (const metric of ['LOW_STOCK', 'EXPIRING_STOCK']) {
      const [small, full] = await both(`/v1/analytics/metrics/${metric}`);
      expect(Number(full.value)).toBeGreaterThan(1);
      expect(small).toMatchObject({ value: 1, truncated: true });
    }
    const [small, full] = await both('/v1/analytics/approval-backlog');
    expect(Number(full.totalPending)).toBeGreaterThan(1);
    expect(small).toMatchObject({ totalPending: 1, truncated: true });
    const briefing = await capped.bed.request('/v1/analytics/briefing', { key: capped.key });
    expect((briefing.body as Json).truncated).toBe(true);
  });

  test('a read under its cap is not truncated', async () => {
    const [small] = await both('/v1/analytics/metrics/PENDING_ORDERS');
    expect(small.truncated).toBe(false);
  });
});
