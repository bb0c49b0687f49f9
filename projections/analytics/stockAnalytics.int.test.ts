import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/events/index.js';
import { at, caps, asOf, tenantEvents, lowStockItem, themedAnalyticsBed } from '../../test/support/analyticsProjectionEvents.js';

describe('analytics projection', () => {
  const analytics = themedAnalyticsBed();
  const reader = analytics.reader;
  const lowStock = async (tenantId: string) => (await reader(tenantId).exceptions({ catalogItemId: undefined, cap: 100 }, asOf)).exceptions;

  it('LOW_STOCK: low below the reorder point, a stock-out at 0, detectedAt kept while low and renewed after recovery', async () => {
    const tenantId = 'tenant-low';
    const e = tenantEvents(tenantId);
    await analytics.bed.project([
      e.item('itm_gloves', at(1, 8), { reorderPoint: 10, unitOfMeasure: 'box' }),
      e.warehouse('wh_a', at(1, 8)),
      e.box('box_1', 'itm_gloves', 'wh_a', at(1, 8, 1)),
      e.move('box_1', 'itm_gloves', 'receive', 10, at(1, 8, 2)),
    ]);
    // available 10 is not below 10.
    expect(await reader(tenantId).metric('LOW_STOCK', { caps }, asOf)).toEqual({ metric: 'LOW_STOCK', value: 0, unit: 'count', breakdown: [], truncated: false });

    await analytics.bed.project([e.move('box_1', 'itm_gloves', 'consume', -1, at(1, 8, 3)), e.move('box_1', 'itm_gloves', 'consume', -2, at(1, 8, 4))]);
    expect(await reader(tenantId).metric('LOW_STOCK', { caps }, asOf)).toEqual({ metric: 'LOW_STOCK', value: 1, unit: 'count', breakdown: [], truncated: false });
    expect(await reader(tenantId).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [lowStockItem('itm_gloves', 'wh_a', 7, 10, at(1, 8, 3), 'box')],
    });

    await analytics.bed.project([e.move('box_1', 'itm_gloves', 'receive', 5, at(1, 8, 5)), e.move('box_1', 'itm_gloves', 'consume', -12, at(1, 8, 6))], { batchSize: 1 });
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_gloves', 'wh_a', 0, 10, at(1, 8, 6), 'box')]);
  });

  it('LOW_STOCK: quarantined boxes and reserved quantities are not available', async () => {
    const tenantId = 'tenant-quarantine';
    const e = tenantEvents(tenantId);
    await analytics.bed.project([
      e.item('itm_q', at(1), { reorderPoint: 5 }),
      e.warehouse('wh_q', at(1)),
      e.box('box_q1', 'itm_q', 'wh_q', at(1)),
      e.move('box_q1', 'itm_q', 'receive', 8, at(1, 9, 1)),
      e.box('box_q2', 'itm_q', 'wh_q', at(1, 9, 2)),
      e.move('box_q2', 'itm_q', 'receive', 4, at(1, 9, 3)),
    ]);
    expect(await lowStock(tenantId)).toEqual([]);

    await analytics.bed.project([e.boxStatus('box_q1', 'quarantined', at(2)), e.move('box_q2', 'itm_q', 'reserve', 0, at(2, 10), { reservedDelta: 1 })]);
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_q', 'wh_q', 3, 5, at(2))]);

    await analytics.bed.project([e.boxStatus('box_q1', 'active', at(3))]);
    expect(await lowStock(tenantId)).toEqual([]);
  });

  it('LOW_STOCK: a transfer moves the box and its stock to the other warehouse; an issue does not move it', async () => {
    const tenantId = 'tenant-transfer';
    const e = tenantEvents(tenantId);
    await analytics.bed.project([
      e.item('itm_t', at(1), { reorderPoint: 3 }),
      e.warehouse('wh_a', at(1)),
      e.warehouse('wh_b', at(1)),
      e.box('box_t', 'itm_t', 'wh_a', at(1)),
      e.move('box_t', 'itm_t', 'receive', 5, at(1, 10)),
      e.move('box_t', 'itm_t', 'transfer', 0, at(2), { fromWarehouseId: 'wh_a', toWarehouseId: 'wh_b' }),
      e.move('box_t', 'itm_t', 'consume', -3, at(3)),
      e.move('box_t', 'itm_t', 'issue', -1, at(4), { fromWarehouseId: 'wh_b', toWarehouseId: 'wh_a' }),
    ]);
    expect(await lowStock(tenantId)).toEqual([lowStockItem('itm_t', 'wh_a', 0, 3, at(2)), lowStockItem('itm_t', 'wh_b', 1, 3, at(3))]);
  });

  it('LOW_STOCK: follows reorder point revisions, item and warehouse status, and waits for the item and warehouse to exist', async () => {
    const tenantId = 'tenant-revise';
    const e = tenantEvents(tenantId);
    await analytics.bed.project([
      // Box first, item and warehouse later: the level is low once both are active.
      e.box('box_r', 'itm_r', 'wh_r', at(1)),
      e.move('box_r', 'itm_r', 'receive', 6, at(1, 10)),
      e.item('itm_r', at(1, 11), { reorderPoint: 10 }),
    ]);
    expect(await lowStock(tenantId)).toEqual([]);
    const steps: [EventEnvelope, ReturnType<typeof lowStockItem>[]][] = [
      [e.warehouse('wh_r', at(1, 12)), [lowStockItem('itm_r', 'wh_r', 6, 10, at(1, 12))]],
      [e.revise('itm_r', at(2, 10), { name: 'Renamed' }), [lowStockItem('itm_r', 'wh_r', 6, 10, at(1, 12))]],
      [e.revise('itm_r', at(3), { reorderPoint: 4 }), []],
      [e.revise('itm_r', at(4), { reorderPoint: 8, unitOfMeasure: 'pack' }), [lowStockItem('itm_r', 'wh_r', 6, 8, at(4), 'pack')]],
      [e.revise('itm_r', at(4, 10), { reorderPoint: 9 }), [lowStockItem('itm_r', 'wh_r', 6, 9, at(4), 'pack')]],
      [e.itemStatus('itm_r', 'inactive', at(5)), []],
      [e.itemStatus('itm_r', 'active', at(6)), [lowStockItem('itm_r', 'wh_r', 6, 9, at(6), 'pack')]],
      [e.warehouseStatus('wh_r', 'inactive', at(7)), []],
      [e.warehouseStatus('wh_r', 'active', at(8)), [lowStockItem('itm_r', 'wh_r', 6, 9, at(8), 'pack')]],
    ];
    for (const [given, expected] of steps) {
      await analytics.bed.project([given]);
      expect(await lowStock(tenantId), given.type).toEqual(expected);
    }
  });

  it('EXPIRING_STOCK: expiry up to asOf + 30 days, expired boxes included, empty, depleted and disposed boxes excluded', async () => {
    const tenantId = 'tenant-expiry';
    const e = tenantEvents(tenantId);
    const stocked = (boxId: string, expiresOn: string | undefined, quantity = 1): EventEnvelope[] => [
      e.box(boxId, 'itm_e', 'wh_e', at(1), expiresOn === undefined ? {} : { expiresOn }),
      ...(quantity === 0 ? [] : [e.move(boxId, 'itm_e', 'receive', quantity, at(1, 10))]),
    ];
    await analytics.bed.project([
      e.item('itm_e', at(1)),
      e.warehouse('wh_e', at(1)),
      ...stocked('box_past', '2026-11-09'),
      ...stocked('box_today', '2026-11-10'),
      ...stocked('box_week', '2026-11-17'),
      ...stocked('box_week_after', '2026-11-18'),
      ...stocked('box_horizon', '2026-12-10'),
      ...stocked('box_beyond', '2026-12-11'),
      ...stocked('box_depleted', '2026-11-12'),
      e.boxStatus('box_depleted', 'depleted', at(2)),
      ...stocked('box_disposed', '2026-11-12'),
      e.boxStatus('box_disposed', 'disposed', at(2)),
      ...stocked('box_empty', '2026-11-12', 0),
      ...stocked('box_used_up', '2026-11-12', 2),
      e.move('box_used_up', 'itm_e', 'consume', -2, at(3)),
      ...stocked('box_quarantined', '2026-11-12'),
      e.boxStatus('box_quarantined', 'quarantined', at(2)),
      ...stocked('box_expired', '2026-11-01', 3),
      e.boxStatus('box_expired', 'expired', at(2)),
      ...stocked('box_no_expiry', undefined),
    ]);
    expect(await reader(tenantId).metric('EXPIRING_STOCK', { caps }, asOf)).toEqual({ metric: 'EXPIRING_STOCK', value: 7, unit: 'count', breakdown: [], truncated: false });
    const expiring = (boxId: string, expiresOn: string, priority: number, detectedAt: string, onHand = 1) => ({
      metric: 'EXPIRING_STOCK',
      priority,
      drillDownType: 'box',
      drillDownId: boxId,
      detectedAt,
      reference: { boxId, catalogItemId: 'itm_e', warehouseId: 'wh_e', expiresOn, onHand, unitOfMeasure: 'unit' },
    });
    expect(await reader(tenantId).exceptions({ cap: 100 }, asOf)).toEqual({
      total: 7,
      truncated: false,
      exceptions: [
        expiring('box_expired', '2026-11-01', 80, '2026-10-02T00:00:00.000Z', 3),
        expiring('box_past', '2026-11-09', 80, '2026-10-10T00:00:00.000Z'),
        expiring('box_today', '2026-11-10', 70, '2026-10-11T00:00:00.000Z'),
        expiring('box_quarantined', '2026-11-12', 70, '2026-10-13T00:00:00.000Z'),
        expiring('box_week', '2026-11-17', 70, '2026-10-18T00:00:00.000Z'),
        expiring('box_week_after', '2026-11-18', 45, '2026-10-19T00:00:00.000Z'),
        expiring('box_horizon', '2026-12-10', 45, '2026-11-10T00:00:00.000Z'),
      ],
    });
    // One day later the horizon takes in the next day, whatever the time of day.
    expect((await reader(tenantId).metric('EXPIRING_STOCK', { caps }, at(11, 0))).value).toBe(8);
    expect((await reader(tenantId).metric('EXPIRING_STOCK', { caps: { ...caps, counts: 7 } }, asOf)).truncated).toBe(false);
    expect(await reader(tenantId).metric('EXPIRING_STOCK', { caps: { ...caps, counts: 6 } }, asOf)).toEqual({
      metric: 'EXPIRING_STOCK',
      value: 6,
      unit: 'count',
      breakdown: [],
      truncated: true,
    });
  });

});
