import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyticsComputer } from '../../src/analytics/results.js';
import { createProjectionTestBed, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { analyticsProjection } from './projection.js';
import { createAnalyticsReader } from './queries.js';
import { at, caps, asOf, tenantEvents, pendingOrder, lowStockItem } from '../../test/support/analyticsProjectionEvents.js';

describe('analytics projection', () => {
  let bed: ProjectionTestBed;
  const reader = (tenantId: string): AnalyticsComputer => createAnalyticsReader(bed.pool, tenantId);
  const lowStock = async (tenantId: string) => (await reader(tenantId).exceptions({ catalogItemId: undefined, cap: 100 }, asOf)).exceptions;

  beforeAll(async () => {
    bed = await createProjectionTestBed([analyticsProjection]);
  });
  afterAll(async () => bed?.close());

  it('keeps tenants apart: the same ids in two tenants never mix', async () => {
    const a = tenantEvents('tenant-iso-a');
    const b = tenantEvents('tenant-iso-b');
    await bed.project([
      a.item('itm_1', at(1), { reorderPoint: 5 }),
      b.item('itm_1', at(1), { reorderPoint: 1 }),
      a.warehouse('wh_1', at(1)),
      b.warehouse('wh_1', at(1)),
      a.box('box_1', 'itm_1', 'wh_1', at(1), { expiresOn: '2026-11-20' }),
      b.box('box_1', 'itm_1', 'wh_1', at(1)),
      a.move('box_1', 'itm_1', 'receive', 2, at(1, 10)),
      b.move('box_1', 'itm_1', 'receive', 2, at(1, 10)),
      b.move('box_1', 'itm_1', 'consume', -1, at(2)),
      a.clinic('cli_1', 'A clinic', at(1)),
      b.clinic('cli_1', 'B clinic', at(1)),
      ...pendingOrder(a, 'ord_1', 1, at(5)),
      b.drafted('ord_1', 1, 'cli_1', at(1)),
    ]);
    const a1 = reader('tenant-iso-a');
    const b1 = reader('tenant-iso-b');
    expect((await a1.exceptions({ cap: 10 }, asOf)).exceptions.map((x) => x.metric)).toEqual(['LOW_STOCK', 'EXPIRING_STOCK', 'APPROVAL_BACKLOG']);
    expect(await b1.exceptions({ cap: 10 }, asOf)).toEqual({ total: 0, truncated: false, exceptions: [] });
    expect(await a1.comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [{ clinicId: 'cli_1', clinicName: 'A clinic', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 1 }],
    });
    expect(await b1.comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [{ clinicId: 'cli_1', clinicName: 'B clinic', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 0 }],
    });
    expect((await b1.metric('CONSUMPTION_TREND', { caps, window: { from: at(1, 0), to: at(3, 0) } }, asOf)).value).toBe(1);
    expect((await a1.metric('CONSUMPTION_TREND', { caps, window: { from: at(1, 0), to: at(3, 0) } }, asOf)).value).toBe(0);
    const nobody = reader('tenant-nobody');
    expect(await nobody.metric('PENDING_ORDERS', { caps }, asOf)).toEqual({ metric: 'PENDING_ORDERS', value: 0, unit: 'orders', breakdown: [], truncated: false });
    expect(await nobody.trend({ window: { from: at(1, 0), to: at(3, 0) }, granularity: 'day', cap: 10 })).toEqual({ granularity: 'day', truncated: false, series: [] });
  });

  it('dead-letters events that do not fit and applies the rest of the batch', async () => {
    const tenantId = 'tenant-dead';
    const e = tenantEvents(tenantId);
    const letters = await bed.project([
      e.item('itm_1', at(1), { reorderPoint: 1 }),
      e.warehouse('wh_1', at(1)),
      e.move('box_ghost', 'itm_1', 'consume', -1, at(2)),
      e.submitted('ord_ghost', at(2)),
      e.drafted('ord_1', 1, 'cli_1', at(1)),
      e.resolved('ord_1', 'exc_never', at(2)),
      e.item('itm_1', at(3)),
      e.box('box_1', 'itm_1', 'wh_1', at(3)),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['StockMovementRecorded', 'analytics'],
      ['OrderSubmitted', 'analytics'],
      ['DeliveryExceptionResolved', 'analytics'],
      ['CatalogItemDefined', 'analytics'],
    ]);
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_1', 'wh_1', 0, 1, at(3))]);
    expect(await reader(tenantId).comparison({ cap: 10 })).toEqual({ truncated: false, clinics: [] });
  });

  it('gives the same tables one event at a time as in batches', async () => {
    const rows = await bed.oneByOneDigestsMatch();
    expect(rows.map((row) => row.table)).toEqual(analyticsProjection.tables.map((table) => table.name));
    for (const row of rows) expect(row.oneByOne, row.table).toBe(row.batched);
  });

  it('gives the same tables when a rebuild keeps its rows from batch to batch instead of reading them back', async () => {
    const rows = await bed.oneByOneDigestsMatch({ rebuild: true });
    expect(rows.map((row) => row.table)).toEqual(analyticsProjection.tables.map((table) => table.name));
    for (const row of rows) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
