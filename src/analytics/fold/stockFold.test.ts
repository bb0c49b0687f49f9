import { describe, expect, test } from 'vitest';
import { caps, asOf, ev, computer, t, item, warehouse, box, move, boxStatus, counted } from '../../../test/support/analyticsFoldEvents.js';

// ── LOW_STOCK ──
describe('low stock', () => {
  const base = [item('itm_1', t(1)), warehouse('wh_1', t(1))];

  test('a pair becomes low when registered empty, stops when stocked, and is low again with the new time', async () => {
    const events = [...base, box('box_1', 'itm_1', 'wh_1', t(2)), move('receive', 'box_1', 'itm_1', 20, t(3))];
    expect(await computer(events).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));

    const again = [...events, move('consume', 'box_1', 'itm_1', -12, t(4)), move('consume', 'box_1', 'itm_1', -1, t(5))];
    const c = computer(again);
    expect(await c.metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 1));
    expect(await c.exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [
        {
          metric: 'LOW_STOCK',
          priority: 55,
          drillDownType: 'catalog_item',
          drillDownId: 'itm_1',
          detectedAt: t(4),
          reference: { catalogItemId: 'itm_1', warehouseId: 'wh_1', available: 7, reorderPoint: 10, unitOfMeasure: 'unit' },
        },
      ],
    });
  });

  test('registered empty is a stock-out detected at registration; available 9 of 10 is low, 10 is not', async () => {
    const empty = computer([...base, box('box_1', 'itm_1', 'wh_1', t(2))]);
    expect((await empty.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([
      { priority: 65, detectedAt: t(2), reference: { available: 0 } },
    ]);
    const nine = computer([...base, box('box_1', 'itm_1', 'wh_1', t(2)), move('receive', 'box_1', 'itm_1', 9, t(3))]);
    expect((await nine.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ priority: 55, detectedAt: t(2), reference: { available: 9 } }]);
    const ten = computer([...base, box('box_1', 'itm_1', 'wh_1', t(2)), move('receive', 'box_1', 'itm_1', 10, t(3))]);
    expect(await ten.metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
  });

  test('reserved stock and boxes that are not active do not count as available', async () => {
    const events = [
      ...base,
      box('box_1', 'itm_1', 'wh_1', t(2)),
      move('receive', 'box_1', 'itm_1', 15, t(2, 1)),
      box('box_2', 'itm_1', 'wh_1', t(2, 2)),
      move('receive', 'box_2', 'itm_1', 50, t(2, 3)),
      boxStatus('box_2', 'quarantined', t(3)),
      move('reserve', 'box_1', 'itm_1', 0, t(4), { reservedDelta: 6 }),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(4), reference: { available: 9 } }]);
    const released = computer([...events, boxStatus('box_2', 'active', t(5))]);
    expect(await released.metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
  });

  test('item and warehouse must both be active; the level is low from the event that made them so', async () => {
    const noWarehouse = [item('itm_1', t(1)), box('box_1', 'itm_1', 'wh_1', t(2))];
    expect(await computer(noWarehouse).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
    const opened = [...noWarehouse, warehouse('wh_1', t(3))];
    expect((await computer(opened).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(3) }]);
    const closed = [...opened, ev('WarehouseStatusChanged', { warehouseId: 'wh_1', status: 'closed' }, t(4))];
    expect(await computer(closed).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
    const inactiveItem = [...opened, ev('CatalogItemStatusChanged', { itemId: 'itm_1', status: 'inactive' }, t(4))];
    expect(await computer(inactiveItem).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
    const reactivated = [...inactiveItem, ev('CatalogItemStatusChanged', { itemId: 'itm_1', status: 'active' }, t(5))];
    expect((await computer(reactivated).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(5) }]);
    const undefinedItem = [warehouse('wh_1', t(1)), box('box_1', 'itm_9', 'wh_1', t(2))];
    expect(await computer(undefinedItem).metric('LOW_STOCK', { caps }, asOf)).toEqual(counted('LOW_STOCK', 0));
  });

  test('detectedAt stays while low; a revised reorder point re-evaluates every level of the item', async () => {
    const events = [
      ...base,
      warehouse('wh_2', t(1)),
      box('box_1', 'itm_1', 'wh_1', t(2)),
      move('receive', 'box_1', 'itm_1', 5, t(3)),
      move('consume', 'box_1', 'itm_1', -1, t(4)),
      box('box_2', 'itm_1', 'wh_2', t(5)),
      move('receive', 'box_2', 'itm_1', 12, t(5, 1)),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ detectedAt: t(2), reference: { warehouseId: 'wh_1', available: 4 } }]);
    const revised = [...events, ev('CatalogItemRevised', { itemId: 'itm_1', reorderPoint: 13, unitOfMeasure: 'box' }, t(6))];
    expect((await computer(revised).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([
      { detectedAt: t(2), reference: { warehouseId: 'wh_1', available: 4, reorderPoint: 13, unitOfMeasure: 'box' } },
      { detectedAt: t(6), reference: { warehouseId: 'wh_2', available: 12, reorderPoint: 13, unitOfMeasure: 'box' } },
    ]);
  });

  test('a transfer moves the box from one level to the other and re-evaluates both', async () => {
    const events = [
      ...base,
      warehouse('wh_2', t(1)),
      box('box_1', 'itm_1', 'wh_1', t(2)),
      move('receive', 'box_1', 'itm_1', 30, t(2, 1)),
      move('transfer', 'box_1', 'itm_1', 0, t(3), { fromWarehouseId: 'wh_1', toWarehouseId: 'wh_2' }),
    ];
    const result = await computer(events).exceptions({ cap: 10 }, asOf);
    expect(result.exceptions).toEqual([
      {
        metric: 'LOW_STOCK',
        priority: 65,
        drillDownType: 'catalog_item',
        drillDownId: 'itm_1',
        detectedAt: t(3),
        reference: { catalogItemId: 'itm_1', warehouseId: 'wh_1', available: 0, reorderPoint: 10, unitOfMeasure: 'unit' },
      },
    ]);
    // An issue naming warehouses does not move the box.
    const issued = [...events, move('issue', 'box_1', 'itm_1', -25, t(4), { fromWarehouseId: 'wh_2', toWarehouseId: 'wh_1' })];
    expect((await computer(issued).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([
      { detectedAt: t(3), reference: { warehouseId: 'wh_1', available: 0 } },
      { detectedAt: t(4), reference: { warehouseId: 'wh_2', available: 5 } },
    ]);
  });

  test('counts are capped', async () => {
    const events = [...base, warehouse('wh_2', t(1)), box('box_1', 'itm_1', 'wh_1', t(2)), box('box_2', 'itm_1', 'wh_2', t(2))];
    const c = computer(events);
    expect(await c.metric('LOW_STOCK', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(counted('LOW_STOCK', 1, true));
    expect(await c.metric('LOW_STOCK', { caps: { ...caps, counts: 2 } }, asOf)).toEqual(counted('LOW_STOCK', 2));
  });
});

// ── EXPIRING_STOCK ──
describe('expiring stock', () => {
  // asOf 2026-11-10: horizon 2026-12-10; within 7 days up to 2026-11-17.
  const withBox = (boxId: string, expiresOn: string | undefined, onHand = 3, itemId = 'itm_1') => [
    box(boxId, itemId, 'wh_1', t(1), expiresOn === undefined ? {} : { expiresOn }),
    move('receive', boxId, itemId, onHand, t(1, 1)),
  ];
  const base = [item('itm_1', t(1), { unitOfMeasure: 'box', reorderPoint: 0 }), warehouse('wh_1', t(1))];

  test('the horizon, the priorities and the detection time', async () => {
    const events = [
      ...base,
      ...withBox('box_a', '2026-12-10'),
      ...withBox('box_b', '2026-12-11'),
      ...withBox('box_c', '2026-11-09'),
      ...withBox('box_d', '2026-11-10'),
      ...withBox('box_e', '2026-11-17'),
      ...withBox('box_f', '2026-11-18'),
      ...withBox('box_g', undefined),
    ];
    const c = computer(events);
    expect(await c.metric('EXPIRING_STOCK', { caps }, asOf)).toEqual(counted('EXPIRING_STOCK', 5));
    const result = await c.exceptions({ cap: 10 }, asOf);
    expect(result.exceptions.map((e) => [e.drillDownId, e.priority, e.detectedAt])).toEqual([
      ['box_c', 80, '2026-10-10T00:00:00.000Z'],
      ['box_d', 70, '2026-10-11T00:00:00.000Z'],
      ['box_e', 70, '2026-10-18T00:00:00.000Z'],
      ['box_f', 45, '2026-10-19T00:00:00.000Z'],
      ['box_a', 45, '2026-11-10T00:00:00.000Z'],
    ]);
    expect(result.exceptions[0]).toEqual({
      metric: 'EXPIRING_STOCK',
      priority: 80,
      drillDownType: 'box',
      drillDownId: 'box_c',
      detectedAt: '2026-10-10T00:00:00.000Z',
      reference: { boxId: 'box_c', catalogItemId: 'itm_1', warehouseId: 'wh_1', expiresOn: '2026-11-09', onHand: 3, unitOfMeasure: 'box' },
    });
    // asOf late in the day: the horizon is by UTC date.
    expect(await c.metric('EXPIRING_STOCK', { caps }, '2026-11-11T23:59:59.999Z')).toEqual(counted('EXPIRING_STOCK', 6));
  });

  test('empty, depleted and disposed boxes do not count; quarantined and expired ones do', async () => {
    const events = [
      ...base,
      ...withBox('box_empty', '2026-11-20', 0),
      ...withBox('box_dep', '2026-11-20'),
      boxStatus('box_dep', 'depleted', t(2)),
      ...withBox('box_dis', '2026-11-20'),
      boxStatus('box_dis', 'disposed', t(2)),
      ...withBox('box_q', '2026-11-20'),
      boxStatus('box_q', 'quarantined', t(2)),
      ...withBox('box_x', '2026-11-01'),
      boxStatus('box_x', 'expired', t(2)),
      ...withBox('box_used', '2026-11-20'),
      move('consume', 'box_used', 'itm_1', -3, t(3)),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions.map((e) => e.drillDownId)).toEqual(['box_x', 'box_q']);
  });

  test('the unit is the item current one, empty when the item is unknown; catalogItemId narrows', async () => {
    const events = [
      ...base,
      ...withBox('box_1', '2026-11-20'),
      ...withBox('box_2', '2026-11-20', 2, 'itm_unknown'),
      ev('CatalogItemRevised', { itemId: 'itm_1', unitOfMeasure: 'pack' }, t(5)),
    ];
    const c = computer(events);
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions.map((e) => [e.drillDownId, (e.reference as { unitOfMeasure: string }).unitOfMeasure])).toEqual([
      ['box_1', 'pack'],
      ['box_2', ''],
    ]);
    expect((await c.exceptions({ cap: 10, catalogItemId: 'itm_unknown' }, asOf)).exceptions.map((e) => e.drillDownId)).toEqual(['box_2']);
    expect(await c.metric('EXPIRING_STOCK', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(counted('EXPIRING_STOCK', 1, true));
  });
});
