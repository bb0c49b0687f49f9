import { describe, expect, test } from 'vitest';
import { caps, asOf, ev, computer, t, item, warehouse, box, move, draft, submit, requestApproval, approve, dispatch, raise } from '../../../test/support/analyticsFoldEvents.js';

// ── CONSUMPTION_TREND and the trend ──
describe('consumption', () => {
  const window = { from: '2026-11-02T00:00:00.000Z', to: '2026-11-12T00:00:00.000Z' };
  const events = [
    // Consumed before the item is defined: not counted.
    move('consume', 'box_b', 'itm_b', -100, t(3)),
    item('itm_b', t(3, 1), { name: 'Burs' }),
    item('itm_a', t(1), { name: 'Alginate' }),
    warehouse('wh_1', t(1)),
    box('box_a', 'itm_a', 'wh_1', t(1)),
    move('receive', 'box_a', 'itm_a', 100, t(1)),
    // Out of the window (before from, on to).
    move('consume', 'box_a', 'itm_a', -1, t(1, 23, 59)),
    move('consume', 'box_a', 'itm_a', -1, t(12)),
    // In the window.
    move('consume', 'box_a', 'itm_a', -2, t(2)),
    move('consume', 'box_a', 'itm_a', -3, t(2, 23, 59)),
    move('return', 'box_a', 'itm_a', 1, t(3)),
    move('consume', 'box_a', 'itm_a', -4, t(9)),
    // Movement occurredAt decides the day, not the event time.
    ev('StockMovementRecorded', { movementId: 'mov_late', type: 'consume', boxId: 'box_a', catalogItemId: 'itm_a', quantityDelta: -5, actorId: 'mem_1', occurredAt: t(10) }, t(30)),
    ev('CatalogItemRevised', { itemId: 'itm_a', unitOfMeasure: 'box', name: 'Alginate XL' }, t(11)),
    move('consume', 'box_a', 'itm_a', -6, t(11, 5)),
    move('consume', 'box_b', 'itm_b', -7, t(4)),
  ];

  test('CONSUMPTION_TREND: movements in the window, quantity per item and unit with the current name', async () => {
    expect(await computer(events).metric('CONSUMPTION_TREND', { window, caps }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 6,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Alginate XL' },
        { dimension: 'itm_a', value: 14, unit: 'unit', name: 'Alginate XL' },
        { dimension: 'itm_b', value: 7, unit: 'unit', name: 'Burs' },
      ],
      truncated: false,
    });
  });

  test('CONSUMPTION_TREND reads the first caps.trend daily rows', async () => {
    const c = computer(events);
    // Rows: (a, box, 11), (a, unit, 02), (a, unit, 09), (a, unit, 10), (b, unit, 04).
    expect(await c.metric('CONSUMPTION_TREND', { window, caps: { ...caps, trend: 2 } }, asOf)).toEqual({
      metric: 'CONSUMPTION_TREND',
      value: 3,
      unit: 'movements',
      breakdown: [
        { dimension: 'itm_a', value: 6, unit: 'box', name: 'Alginate XL' },
        { dimension: 'itm_a', value: 5, unit: 'unit', name: 'Alginate XL' },
      ],
      truncated: true,
    });
    expect((await c.metric('CONSUMPTION_TREND', { window, caps: { ...caps, trend: 5 } }, asOf)).truncated).toBe(false);
    const empty = await c.metric('CONSUMPTION_TREND', { window: { from: '2026-12-01T00:00:00.000Z', to: '2026-12-02T00:00:00.000Z' }, caps }, asOf);
    expect(empty).toEqual({ metric: 'CONSUMPTION_TREND', value: 0, unit: 'movements', breakdown: [], truncated: false });
  });

  test('daily trend', async () => {
    expect(await computer(events).trend({ window, granularity: 'day', cap: 4 })).toEqual({
      granularity: 'day',
      truncated: true,
      series: [
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'box',
          points: [{ periodStart: '2026-11-11T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 6, movements: 1 }],
        },
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'unit',
          points: [
            { periodStart: '2026-11-02T00:00:00.000Z', periodEnd: '2026-11-03T00:00:00.000Z', quantity: 5, movements: 2 },
            { periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-10T00:00:00.000Z', quantity: 4, movements: 1 },
            { periodStart: '2026-11-10T00:00:00.000Z', periodEnd: '2026-11-11T00:00:00.000Z', quantity: 5, movements: 1 },
          ],
        },
      ],
    });
  });

  test('weekly trend: ISO weeks clipped to the window', async () => {
    // 2026-11-02 is a Monday; the window 2026-11-04 .. 2026-11-12 cuts weeks on both sides.
    const clipped = { from: '2026-11-04T00:00:00.000Z', to: '2026-11-12T00:00:00.000Z' };
    expect(await computer(events).trend({ window: clipped, granularity: 'week', cap: 10 })).toEqual({
      granularity: 'week',
      truncated: false,
      series: [
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'box',
          points: [{ periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 6, movements: 1 }],
        },
        {
          catalogItemId: 'itm_a',
          name: 'Alginate XL',
          unitOfMeasure: 'unit',
          points: [{ periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 9, movements: 2 }],
        },
        {
          catalogItemId: 'itm_b',
          name: 'Burs',
          unitOfMeasure: 'unit',
          points: [{ periodStart: '2026-11-04T00:00:00.000Z', periodEnd: '2026-11-09T00:00:00.000Z', quantity: 7, movements: 1 }],
        },
      ],
    });
    expect((await computer(events).trend({ window, granularity: 'week', cap: 10 })).series[1]?.points).toEqual([
      { periodStart: '2026-11-02T00:00:00.000Z', periodEnd: '2026-11-09T00:00:00.000Z', quantity: 5, movements: 2 },
      { periodStart: '2026-11-09T00:00:00.000Z', periodEnd: '2026-11-12T00:00:00.000Z', quantity: 9, movements: 2 },
    ]);
  });
});

// ── The exceptions report ──
describe('exceptions report', () => {
  const events = [
    item('itm_1', t(1)),
    item('itm_2', t(1)),
    warehouse('wh_1', t(1)),
    box('box_1', 'itm_1', 'wh_1', t(2), { expiresOn: '2026-11-05' }),
    move('receive', 'box_1', 'itm_1', 3, t(2)),
    box('box_2', 'itm_2', 'wh_1', t(3), { expiresOn: '2026-11-05' }),
    move('receive', 'box_2', 'itm_2', 3, t(3)),
    draft('ord_1', 1, 'cli_1', t(1)),
    submit('ord_1', t(1)),
    requestApproval('ord_1', t(2)),
    draft('ord_2', 2, 'cli_1', t(1)),
    submit('ord_2', t(1)),
    approve('ord_2', t(1)),
    dispatch('ord_2', t(2)),
    raise('ord_2', 'exc_1', t(4)),
    raise('ord_2', 'exc_2', t(4)),
  ];

  test('sources merge in priority order', async () => {
    const result = await computer(events).exceptions({ cap: 10 }, asOf);
    expect(result.total).toBe(7);
    expect(result.truncated).toBe(false);
    expect(result.exceptions.map((e) => [e.metric, e.drillDownId, e.priority])).toEqual([
      ['DELIVERY_EXCEPTIONS', 'ord_2', 90],
      ['DELIVERY_EXCEPTIONS', 'ord_2', 90],
      ['EXPIRING_STOCK', 'box_1', 80],
      ['EXPIRING_STOCK', 'box_2', 80],
      ['LOW_STOCK', 'itm_1', 55],
      ['LOW_STOCK', 'itm_2', 55],
      ['APPROVAL_BACKLOG', 'ord_1', 40],
    ]);
  });

  test('each source gives its first cap+1; the report keeps cap', async () => {
    const result = await computer(events).exceptions({ cap: 1 }, asOf);
    // 2 + 2 + 2 + 0 + 1 kept of the sources.
    expect(result.total).toBe(7);
    expect(result.truncated).toBe(true);
    expect(result.exceptions).toEqual([
      {
        metric: 'DELIVERY_EXCEPTIONS',
        priority: 90,
        drillDownType: 'fulfillment',
        drillDownId: 'ord_2',
        detectedAt: t(4),
        reference: { orderId: 'ord_2', orderNumber: 2, exceptionId: 'exc_1', reasonCode: 'delayed' },
      },
    ]);
    const two = await computer([...events, raise('ord_2', 'exc_3', t(4))]).exceptions({ cap: 1 }, asOf);
    expect(two.total).toBe(7);
  });

  test('catalogItemId narrows the report to the low and expiring stock of that item', async () => {
    const result = await computer(events).exceptions({ cap: 10, catalogItemId: 'itm_2' }, asOf);
    expect(result.exceptions.map((e) => [e.metric, e.drillDownId])).toEqual([
      ['EXPIRING_STOCK', 'box_2'],
      ['LOW_STOCK', 'itm_2'],
    ]);
    expect(result.total).toBe(2);
  });
});
