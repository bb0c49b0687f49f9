import { describe, expect, it } from 'vitest';
import { event } from '../../test/support/projectionTestBed.js';
import { at, caps, asOf, tenantEvents, pendingOrder, themedAnalyticsBed } from '../../test/support/analyticsProjectionEvents.js';

describe('analytics projection', () => {
  const analytics = themedAnalyticsBed();
  const reader = analytics.reader;

  it('PENDING_ORDERS and the clinic comparison: counters by clinic, only opened clinics listed', async () => {
    const tenantId = 'tenant-clinics';
    const e = tenantEvents(tenantId);
    await analytics.bed.project([
      e.clinic('cli_b', 'Clinic B', at(1)),
      e.drafted('ord_1', 1, 'cli_a', at(1, 10)),
      e.drafted('ord_2', 2, 'cli_a', at(1, 10)),
      e.submitted('ord_2', at(1, 11)),
      e.drafted('ord_3', 3, 'cli_a', at(1, 10)),
      e.submitted('ord_3', at(1, 11)),
      e.requested('ord_3', at(1, 12)),
      e.drafted('ord_4', 4, 'cli_b', at(1, 10)),
      e.submitted('ord_4', at(1, 11)),
      e.approved('ord_4', at(1, 12)),
      e.allocated('ord_4', at(1, 13)),
      e.picking('ord_4', at(1, 14)),
    ]);
    expect(await reader(tenantId).metric('PENDING_ORDERS', { caps }, asOf)).toEqual({ metric: 'PENDING_ORDERS', value: 3, unit: 'orders', breakdown: [], truncated: false });
    expect(await reader(tenantId).comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [{ clinicId: 'cli_b', clinicName: 'Clinic B', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 0 }],
    });

    await analytics.bed.project(
      [
        e.dispatched('ord_4', at(2)),
        e.drafted('ord_5', 5, 'cli_b', at(2)),
        e.submitted('ord_5', at(2, 10)),
        e.cancelled('ord_5', at(2, 11)),
        e.drafted('ord_6', 6, 'cli_c', at(2)),
        e.submitted('ord_6', at(2, 10)),
        e.clinic('cli_a', 'Clinic A', at(3)),
        event('ClinicStatusChanged', { clinicId: 'cli_b', status: 'inactive' }, { tenantId, occurredAt: at(3) }),
        event('ClinicRenamed', { clinicId: 'cli_b', name: 'Clinic B North' }, { tenantId, occurredAt: at(3) }),
      ],
      { batchSize: 3 },
    );
    // ord_2 and ord_6 submitted, ord_3 pending approval; ord_4 dispatched, ord_5 cancelled, ord_1 a draft.
    expect((await reader(tenantId).metric('PENDING_ORDERS', { caps }, asOf)).value).toBe(3);
    expect(await reader(tenantId).comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [
        { clinicId: 'cli_a', clinicName: 'Clinic A', clinicStatus: 'active', totalOrders: 3, pendingApprovalOrders: 1 },
        { clinicId: 'cli_b', clinicName: 'Clinic B North', clinicStatus: 'inactive', totalOrders: 2, pendingApprovalOrders: 0 },
      ],
    });
    expect(await reader(tenantId).comparison({ cap: 1 })).toEqual({
      truncated: true,
      clinics: [{ clinicId: 'cli_a', clinicName: 'Clinic A', clinicStatus: 'active', totalOrders: 3, pendingApprovalOrders: 1 }],
    });
    expect(await reader(tenantId).comparison({ cap: 2 })).toMatchObject({ truncated: false });
  });

  it('APPROVAL_BACKLOG: bands by age at asOf with their edges, the clock kept across stages, capped oldest first', async () => {
    const tenantId = 'tenant-backlog';
    const e = tenantEvents(tenantId);
    const backlogAsOf = at(20, 12);
    await analytics.bed.project([
      ...pendingOrder(e, 'ord_b1', 1, at(19, 12, 0, 0, 1)),
      ...pendingOrder(e, 'ord_b2', 2, at(19, 12)),
      ...pendingOrder(e, 'ord_b3', 3, at(17, 12)),
      ...pendingOrder(e, 'ord_b4', 4, at(17, 12, 0, 0, 1)),
      ...pendingOrder(e, 'ord_b5', 5, at(13, 12)),
      ...pendingOrder(e, 'ord_b6', 6, at(10)),
      e.approved('ord_b6', at(19)),
      e.requested('ord_b6', at(19, 1), 'finance'),
      ...pendingOrder(e, 'ord_b7', 7, at(10)),
      e.requested('ord_b7', at(19), 'finance'),
      ...pendingOrder(e, 'ord_b8', 8, at(10)),
      e.rejected('ord_b8', at(11)),
      ...pendingOrder(e, 'ord_b9', 9, at(10)),
      e.approved('ord_b9', at(11)),
    ]);
    const bands = (under24: number, to72: number, to168: number, over168: number) => [
      { dimension: 'under_24h', value: under24, unit: 'orders', minAgeHours: 0, maxAgeHours: 24 },
      { dimension: '24h_to_72h', value: to72, unit: 'orders', minAgeHours: 24, maxAgeHours: 72 },
      { dimension: '72h_to_168h', value: to168, unit: 'orders', minAgeHours: 72, maxAgeHours: 168 },
      { dimension: 'over_168h', value: over168, unit: 'orders', minAgeHours: 168, maxAgeHours: null },
    ];
    // ord_b6 went back to pending approval at day 19 01:00 (from approved); ord_b7's second stage kept its day-10 clock.
    expect(await reader(tenantId).metric('APPROVAL_BACKLOG', { caps }, backlogAsOf)).toEqual({
      metric: 'APPROVAL_BACKLOG',
      value: 7,
      unit: 'orders',
      breakdown: bands(1, 3, 1, 2),
      truncated: false,
    });
    expect(await reader(tenantId).metric('APPROVAL_BACKLOG', { caps: { ...caps, backlog: 2 } }, backlogAsOf)).toEqual({
      metric: 'APPROVAL_BACKLOG',
      value: 2,
      unit: 'orders',
      breakdown: bands(0, 0, 0, 2),
      truncated: true,
    });
    const approval = (orderId: string, orderNumber: number, priority: number, detectedAt: string, band: string) => ({
      metric: 'APPROVAL_BACKLOG',
      priority,
      drillDownType: 'order',
      drillDownId: orderId,
      detectedAt,
      reference: { orderId, orderNumber, clinicId: 'cli_1', band },
    });
    expect(await reader(tenantId).exceptions({ cap: 100 }, backlogAsOf)).toEqual({
      total: 7,
      truncated: false,
      exceptions: [
        approval('ord_b7', 7, 40, at(10), 'over_168h'),
        approval('ord_b5', 5, 40, at(13, 12), 'over_168h'),
        approval('ord_b3', 3, 40, at(17, 12), '72h_to_168h'),
        approval('ord_b4', 4, 30, at(17, 12, 0, 0, 1), '24h_to_72h'),
        approval('ord_b6', 6, 30, at(19, 1), '24h_to_72h'),
        approval('ord_b2', 2, 30, at(19, 12), '24h_to_72h'),
        approval('ord_b1', 1, 30, at(19, 12, 0, 0, 1), 'under_24h'),
      ],
    });
  });

  it('ORDER_CYCLE_TIME: first milestones, samples on the day of the stage end, window from inclusive and to exclusive', async () => {
    const tenantId = 'tenant-cycle';
    const e = tenantEvents(tenantId);
    await analytics.bed.project([
      e.drafted('ord_c1', 1, 'cli_1', at(1, 9)),
      e.submitted('ord_c1', at(1, 10)),
      e.requested('ord_c1', at(1, 11)),
      e.approved('ord_c1', at(1, 12)),
      e.allocated('ord_c1', at(1, 13)),
      e.dispatched('ord_c1', at(2, 12)),
      e.raised('ord_c1', 'exc_1', at(2, 18)),
      e.resolved('ord_c1', 'exc_1', at(3, 8)),
      e.delivered('ord_c1', at(3, 12)),
      e.received('ord_c1', at(3, 15)),
      e.closed('ord_c1', at(3, 16)),
      e.drafted('ord_c2', 2, 'cli_1', at(2)),
      e.submitted('ord_c2', at(2, 0)),
      e.approved('ord_c2', at(2, 6, 20)),
      e.dispatched('ord_c2', at(4, 0)),
      // Approved without having been submitted: no submitted_to_approved sample, but its dispatch counts.
      e.drafted('ord_c3', 3, 'cli_1', at(2)),
      e.approved('ord_c3', at(2, 20)),
      e.dispatched('ord_c3', at(3, 0)),
    ]);
    const stages = (rows: [number | null, number][]) =>
      ['submitted_to_approved', 'approved_to_dispatched', 'dispatched_to_delivered', 'delivered_to_received'].map((dimension, index) => ({
        dimension,
        value: rows[index]?.[0] ?? null,
        unit: 'hours',
        samples: rows[index]?.[1] ?? 0,
      }));
    const cycle = (from: number, to: number) => reader(tenantId).metric('ORDER_CYCLE_TIME', { caps, window: { from: at(from, 0), to: at(to, 0) } }, asOf);
    expect(await cycle(1, 4)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: 53,
      unit: 'hours',
      // (2 + 6.333…) / 2 = 4.1666… → 4.17
      breakdown: stages([
        [4.17, 2],
        [14, 2],
        [24, 1],
        [3, 1],
      ]),
      truncated: false,
    });
    expect(await cycle(4, 5)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: null,
      unit: 'hours',
      breakdown: stages([
        [null, 0],
        [41.67, 1],
        [null, 0],
        [null, 0],
      ]),
      truncated: false,
    });
    expect(await cycle(2, 3)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: null,
      unit: 'hours',
      breakdown: stages([
        [6.33, 1],
        [24, 1],
        [null, 0],
        [null, 0],
      ]),
      truncated: false,
    });
    await expect(reader(tenantId).metric('ORDER_CYCLE_TIME', { caps }, asOf)).rejects.toThrow(/window/);
  });

});
