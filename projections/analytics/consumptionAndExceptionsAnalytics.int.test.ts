import { beforeAll, describe, expect, it } from 'vitest';
import { at, caps, asOf, type Discrepancy, tenantEvents, pendingOrder, themedAnalyticsBed } from '../../test/support/analyticsProjectionEvents.js';

describe('analytics projection', () => {
  const analytics = themedAnalyticsBed();
  const reader = analytics.reader;

  it('CONSUMPTION_TREND and the trend: consume movements by their own UTC day and the unit at projection time, not netted', async () => {
    const tenantId = 'tenant-consumption';
    const e = tenantEvents(tenantId);
    await analytics.bed.project([
      e.item('itm_a', at(1), { name: 'Nitrile gloves', unitOfMeasure: 'box' }),
      e.item('itm_b', at(1), { name: 'Gauze' }),
      e.warehouse('wh_c', at(1)),
      e.box('box_a', 'itm_a', 'wh_c', at(1)),
      e.box('box_b', 'itm_b', 'wh_c', at(1)),
      e.box('box_late', 'itm_late', 'wh_c', at(1)),
      e.move('box_a', 'itm_a', 'receive', 100, at(1, 10)),
      e.move('box_b', 'itm_b', 'receive', 100, at(1, 10)),
      e.move('box_late', 'itm_late', 'receive', 100, at(1, 10)),
      // Recorded on day 20, happened late on day 2: counts on day 2.
      e.move('box_a', 'itm_a', 'consume', -3, at(2, 23, 30), { occurredAt: at(2, 23, 30) }),
      e.move('box_a', 'itm_a', 'consume', -2, at(3, 1)),
      e.move('box_a', 'itm_a', 'consume', -1, at(3, 9)),
      e.move('box_a', 'itm_a', 'return', 1, at(3, 10)),
      e.move('box_a', 'itm_a', 'issue', -5, at(3, 11)),
      e.move('box_late', 'itm_late', 'consume', -7, at(3)),
      e.revise('itm_a', at(4), { unitOfMeasure: 'pack' }),
      e.move('box_a', 'itm_a', 'consume', -4, at(4, 10)),
      e.item('itm_late', at(5), { name: 'Late item' }),
      e.move('box_late', 'itm_late', 'consume', -1, at(5, 10)),
      e.move('box_b', 'itm_b', 'consume', -10, at(9)),
      e.move('box_b', 'itm_b', 'consume', -5, at(11)),
      e.revise('itm_a', at(12), { name: 'Nitrile gloves M' }),
    ]);
    expect(await reader(tenantId).metric('CONSUMPTION_TREND', { caps, window: { from: at(1, 0), to: at(8, 0) } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 5,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Nitrile gloves M' },
        { dimension: 'itm_a', value: 4, unit: 'pack', name: 'Nitrile gloves M' },
        { dimension: 'itm_late', value: 1, unit: 'unit', name: 'Late item' },
      ],
      truncated: false,
    });
    expect(await reader(tenantId).metric('CONSUMPTION_TREND', { caps, window: { from: at(12, 0), to: at(13, 0) } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 0,
      unit: 'movements',
      breakdown: [],
      truncated: false,
    });
    const point = (from: string, to: string, quantity: number, movements: number) => ({ periodStart: from, periodEnd: to, quantity, movements });
    expect(await reader(tenantId).trend({ window: { from: at(3, 0), to: at(11, 0) }, granularity: 'week', cap: 100 })).toEqual({
      granularity: 'week',
      truncated: false,
      series: [
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'box', points: [point(at(3, 0), at(9, 0), 3, 2)] },
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'pack', points: [point(at(3, 0), at(9, 0), 4, 1)] },
        { catalogItemId: 'itm_b', name: 'Gauze', unitOfMeasure: 'unit', points: [point(at(9, 0), at(11, 0), 10, 1)] },
        { catalogItemId: 'itm_late', name: 'Late item', unitOfMeasure: 'unit', points: [point(at(3, 0), at(9, 0), 1, 1)] },
      ],
    });
    expect(await reader(tenantId).trend({ window: { from: at(1, 0), to: at(12, 0) }, granularity: 'day', cap: 100 })).toEqual({
      granularity: 'day',
      truncated: false,
      series: [
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'box', points: [point(at(2, 0), at(3, 0), 3, 1), point(at(3, 0), at(4, 0), 3, 2)] },
        { catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'pack', points: [point(at(4, 0), at(5, 0), 4, 1)] },
        { catalogItemId: 'itm_b', name: 'Gauze', unitOfMeasure: 'unit', points: [point(at(9, 0), at(10, 0), 10, 1), point(at(11, 0), at(12, 0), 5, 1)] },
        { catalogItemId: 'itm_late', name: 'Late item', unitOfMeasure: 'unit', points: [point(at(5, 0), at(6, 0), 1, 1)] },
      ],
    });
    // Caps count daily rows in (item, unit, day) order.
    expect(await reader(tenantId).trend({ window: { from: at(1, 0), to: at(12, 0) }, granularity: 'week', cap: 2 })).toEqual({
      granularity: 'week',
      truncated: true,
      series: [{ catalogItemId: 'itm_a', name: 'Nitrile gloves M', unitOfMeasure: 'box', points: [point(at(2, 0), at(9, 0), 6, 3)] }],
    });
    expect(await reader(tenantId).metric('CONSUMPTION_TREND', { caps: { ...caps, trend: 3 }, window: { from: at(1, 0), to: at(12, 0) } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 4,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Nitrile gloves M' },
        { dimension: 'itm_a', value: 4, unit: 'pack', name: 'Nitrile gloves M' },
      ],
      truncated: true,
    });
  });

  it('DELIVERY_EXCEPTIONS: open from raised until resolved, by detectedAt then order', async () => {
    const tenantId = 'tenant-delivery';
    const e = tenantEvents(tenantId);
    const shipped = (orderId: string, number: number) => [e.drafted(orderId, number, 'cli_1', at(1)), e.submitted(orderId, at(1)), e.approved(orderId, at(1)), e.dispatched(orderId, at(2))];
    await analytics.bed.project([
      ...shipped('ord_d2', 12),
      ...shipped('ord_d1', 11),
      e.raised('ord_d2', 'exc_1', at(3), 'damaged'),
      e.raised('ord_d1', 'exc_2', at(3)),
      e.raised('ord_d1', 'exc_3', at(3)),
    ]);
    const exception = (orderId: string, orderNumber: number, exceptionId: string, detectedAt: string, reasonCode = 'delayed') => ({
      metric: 'DELIVERY_EXCEPTIONS',
      priority: 90,
      drillDownType: 'fulfillment',
      drillDownId: orderId,
      detectedAt,
      reference: { orderId, orderNumber, exceptionId, reasonCode },
    });
    expect(await reader(tenantId).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 3,
      truncated: false,
      exceptions: [exception('ord_d1', 11, 'exc_2', at(3)), exception('ord_d1', 11, 'exc_3', at(3)), exception('ord_d2', 12, 'exc_1', at(3), 'damaged')],
    });
    await analytics.bed.project([e.resolved('ord_d1', 'exc_2', at(4)), e.raised('ord_d1', 'exc_4', at(4)), e.resolved('ord_d1', 'exc_4', at(4, 10)), e.raised('ord_d1', 'exc_5', at(5))]);
    expect(await reader(tenantId).metric('DELIVERY_EXCEPTIONS', { caps }, asOf)).toEqual({ metric: 'DELIVERY_EXCEPTIONS', value: 3, unit: 'count', breakdown: [], truncated: false });
    expect((await reader(tenantId).exceptions({ cap: 10 }, asOf)).exceptions).toEqual([
      exception('ord_d1', 11, 'exc_3', at(3)),
      exception('ord_d2', 12, 'exc_1', at(3), 'damaged'),
      exception('ord_d1', 11, 'exc_5', at(5)),
    ]);
    expect(await reader(tenantId).metric('DELIVERY_EXCEPTIONS', { caps: { ...caps, counts: 2 } }, asOf)).toEqual({
      metric: 'DELIVERY_EXCEPTIONS',
      value: 2,
      unit: 'count',
      breakdown: [],
      truncated: true,
    });
  });

  it('RECEIPT_DISCREPANCIES: a later receipt replaces the order’s discrepancies, closure removes them', async () => {
    const tenantId = 'tenant-receipt';
    const e = tenantEvents(tenantId);
    const short = (lineId: string, catalogItemId: string, expectedQty: number, receivedQty: number, reasonCode: Discrepancy['reasonCode'] = 'short'): Discrepancy => ({
      lineId,
      catalogItemId,
      expectedQty,
      receivedQty,
      reasonCode,
    });
    const delivered = (orderId: string, number: number) => [e.drafted(orderId, number, 'cli_1', at(1)), e.dispatched(orderId, at(2)), e.delivered(orderId, at(3))];
    await analytics.bed.project([
      ...delivered('ord_r1', 21),
      ...delivered('ord_r2', 22),
      ...delivered('ord_r3', 23),
      e.received('ord_r1', at(4), [short('lin_2', 'itm_b', 5, 4), short('lin_1', 'itm_a', 2, 0, 'damaged'), short('lin_1', 'itm_a', 2, 1)]),
      e.received('ord_r2', at(4), [short('lin_1', 'itm_c', 1, 0)]),
      e.received('ord_r3', at(4)),
    ]);
    const discrepancy = (orderId: string, orderNumber: number, d: Discrepancy, detectedAt: string) => ({
      metric: 'RECEIPT_DISCREPANCIES',
      priority: 50,
      drillDownType: 'fulfillment',
      drillDownId: orderId,
      detectedAt,
      reference: { orderId, orderNumber, ...d },
    });
    expect(await reader(tenantId).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 4,
      truncated: false,
      exceptions: [
        discrepancy('ord_r1', 21, short('lin_1', 'itm_a', 2, 0, 'damaged'), at(4)),
        discrepancy('ord_r1', 21, short('lin_1', 'itm_a', 2, 1), at(4)),
        discrepancy('ord_r1', 21, short('lin_2', 'itm_b', 5, 4), at(4)),
        discrepancy('ord_r2', 22, short('lin_1', 'itm_c', 1, 0), at(4)),
      ],
    });
    await analytics.bed.project([e.received('ord_r1', at(5), [short('lin_2', 'itm_b', 5, 3)]), e.closed('ord_r2', at(5))], { batchSize: 1 });
    expect(await reader(tenantId).metric('RECEIPT_DISCREPANCIES', { caps }, asOf)).toEqual({ metric: 'RECEIPT_DISCREPANCIES', value: 1, unit: 'count', breakdown: [], truncated: false });
    expect((await reader(tenantId).exceptions({ cap: 10 }, asOf)).exceptions).toEqual([discrepancy('ord_r1', 21, short('lin_2', 'itm_b', 5, 3), at(5))]);
  });

  describe('the exceptions report', () => {
    const tenantId = 'tenant-report';
    const e = tenantEvents(tenantId);
    beforeAll(async () => {
      await analytics.bed.project([
        e.item('itm_x', at(1), { reorderPoint: 5 }),
        e.item('itm_y', at(1), { reorderPoint: 5 }),
        e.warehouse('wh_1', at(1)),
        e.warehouse('wh_2', at(1)),
        // Stock-outs of itm_x in wh_1 (day 1) and itm_y in wh_1 (day 1, 11:00); itm_x low in wh_2 (day 2).
        e.box('box_x1', 'itm_x', 'wh_1', at(1)),
        e.box('box_x2', 'itm_x', 'wh_2', at(1), { expiresOn: '2026-11-09' }),
        e.move('box_x2', 'itm_x', 'receive', 9, at(1, 10)),
        e.move('box_x2', 'itm_x', 'consume', -7, at(2)),
        e.box('box_y1', 'itm_y', 'wh_1', at(1, 11)),
        e.box('box_y2', 'itm_y', 'wh_2', at(1), { expiresOn: '2026-11-15' }),
        e.move('box_y2', 'itm_y', 'receive', 20, at(1, 10)),
        e.box('box_y3', 'itm_y', 'wh_2', at(1), { expiresOn: '2026-12-01' }),
        e.move('box_y3', 'itm_y', 'receive', 1, at(1, 10)),
        ...pendingOrder(e, 'ord_old', 1, at(5)),
        ...pendingOrder(e, 'ord_new', 2, at(10)),
        e.dispatched('ord_new', at(10, 1)),
        e.drafted('ord_shipped', 3, 'cli_1', at(1)),
        e.dispatched('ord_shipped', at(2)),
        e.raised('ord_shipped', 'exc_1', at(6)),
        e.delivered('ord_shipped', at(7)),
        e.received('ord_shipped', at(8), [{ lineId: 'lin_1', catalogItemId: 'itm_x', expectedQty: 2, receivedQty: 1, reasonCode: 'short' }]),
        ...pendingOrder(e, 'ord_recent', 4, at(9)),
      ]);
    });

    it('lists every source by priority, then detectedAt, then the drill-down id', async () => {
      const result = await reader(tenantId).exceptions({ cap: 100 }, asOf);
      expect(result.exceptions.map((x) => [x.metric, x.priority, x.drillDownId, x.detectedAt])).toEqual([
        ['DELIVERY_EXCEPTIONS', 90, 'ord_shipped', at(6)],
        ['EXPIRING_STOCK', 80, 'box_x2', '2026-10-10T00:00:00.000Z'],
        ['EXPIRING_STOCK', 70, 'box_y2', '2026-10-16T00:00:00.000Z'],
        ['LOW_STOCK', 65, 'itm_x', at(1)],
        ['LOW_STOCK', 65, 'itm_y', at(1, 11)],
        ['LOW_STOCK', 55, 'itm_x', at(2)],
        ['RECEIPT_DISCREPANCIES', 50, 'ord_shipped', at(8)],
        ['EXPIRING_STOCK', 45, 'box_y3', '2026-11-01T00:00:00.000Z'],
        ['APPROVAL_BACKLOG', 40, 'ord_old', at(5)],
        ['APPROVAL_BACKLOG', 30, 'ord_recent', at(9)],
      ]);
      expect(result).toMatchObject({ total: 10, truncated: false });
    });

    it('narrows the report to the low and expiring stock of one catalog item, in the order of the full report', async () => {
      const result = await reader(tenantId).exceptions({ catalogItemId: 'itm_x', cap: 100 }, asOf);
      expect(result.exceptions.map((x) => [x.metric, x.drillDownId])).toEqual([
        ['EXPIRING_STOCK', 'box_x2'],
        ['LOW_STOCK', 'itm_x'],
        ['LOW_STOCK', 'itm_x'],
      ]);
      expect(result.total).toBe(3);
      const full = await reader(tenantId).exceptions({ cap: 100 }, asOf);
      expect(result.exceptions).toEqual(
        full.exceptions.filter((x) => (x.metric === 'LOW_STOCK' || x.metric === 'EXPIRING_STOCK') && x.reference.catalogItemId === 'itm_x'),
      );
      expect(result.exceptions.filter((x) => x.metric === 'LOW_STOCK').map((x) => x.reference)).toEqual([
        { catalogItemId: 'itm_x', warehouseId: 'wh_1', available: 0, reorderPoint: 5, unitOfMeasure: 'unit' },
        { catalogItemId: 'itm_x', warehouseId: 'wh_2', available: 2, reorderPoint: 5, unitOfMeasure: 'unit' },
      ]);
    });

    it('caps the report: each source reads cap + 1 rows, the first cap of all are listed', async () => {
      const result = await reader(tenantId).exceptions({ cap: 2 }, asOf);
      // delivery 1, expiring 3, low 3, discrepancies 1, approvals 2: 10 found, none of them beyond cap + 1 per source.
      expect(result.total).toBe(10);
      expect(result.truncated).toBe(true);
      expect(result.exceptions.map((x) => x.drillDownId)).toEqual(['ord_shipped', 'box_x2']);
      const one = await reader(tenantId).exceptions({ cap: 1 }, asOf);
      // delivery 1, expiring 2, low 2, discrepancies 1, approvals 2.
      expect(one).toMatchObject({ total: 8, truncated: true });
      expect(one.exceptions.map((x) => x.drillDownId)).toEqual(['ord_shipped']);
      expect(await reader(tenantId).metric('LOW_STOCK', { caps: { ...caps, counts: 1 } }, asOf)).toEqual({
        metric: 'LOW_STOCK',
        value: 1,
        unit: 'count',
        breakdown: [],
        truncated: true,
      });
      expect(await reader(tenantId).metric('LOW_STOCK', { caps: { ...caps, counts: 3 } }, asOf)).toMatchObject({ value: 3, truncated: false });
      expect(await reader(tenantId).metric('RECEIPT_DISCREPANCIES', { caps: { ...caps, counts: 0 } }, asOf)).toMatchObject({ value: 0, truncated: true });
    });
  });

});
