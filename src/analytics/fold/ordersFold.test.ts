import { describe, expect, test } from 'vitest';
import { caps, asOf, ev, computer, t, draft, submit, requestApproval, approve, dispatch, deliver, receive, close, raise, resolve, clinic, counted } from '../../../test/support/analyticsFoldEvents.js';

// ── Orders ──
describe('pending orders, approval backlog and clinics', () => {
  test('PENDING_ORDERS counts submitted to picking, never truncated', async () => {
    const events = [
      draft('ord_draft', 1, 'cli_1', t(1)),
      draft('ord_sub', 2, 'cli_1', t(1)),
      submit('ord_sub', t(2)),
      draft('ord_pend', 3, 'cli_1', t(1)),
      submit('ord_pend', t(2)),
      requestApproval('ord_pend', t(3)),
      draft('ord_pick', 4, 'cli_1', t(1)),
      submit('ord_pick', t(2)),
      approve('ord_pick', t(3)),
      ev('OrderAllocated', { orderId: 'ord_pick', sourceWarehouseId: 'wh_1', allocations: [{ lineId: 'l1', boxId: 'box_1', quantity: 1 }] }, t(3)),
      ev('OrderPickingStarted', { orderId: 'ord_pick', pickerId: 'mem_1' }, t(4)),
      draft('ord_disp', 5, 'cli_1', t(1)),
      submit('ord_disp', t(2)),
      approve('ord_disp', t(3)),
      dispatch('ord_disp', t(4)),
      draft('ord_rej', 6, 'cli_1', t(1)),
      submit('ord_rej', t(2)),
      ev('OrderRejected', { orderId: 'ord_rej', stage: 'lead', approverId: 'mem_2', reason: 'no' }, t(3)),
      // Events of an order never drafted are not folded.
      submit('ord_ghost', t(2)),
    ];
    expect(await computer(events).metric('PENDING_ORDERS', { caps: { ...caps, counts: 1 } }, asOf)).toEqual({
      metric: 'PENDING_ORDERS',
      value: 3,
      unit: 'orders',
      breakdown: [],
      truncated: false,
    });
  });

  const pendingAt = (orderId: string, number: number, since: string, clinicId = 'cli_1') => [
    draft(orderId, number, clinicId, t(1)),
    submit(orderId, t(1, 1)),
    requestApproval(orderId, since),
  ];
  const hours = (h: number, ms = 0) => new Date(Date.parse(asOf) - h * 3_600_000 - ms).toISOString();

  test('APPROVAL_BACKLOG bands at their edges', async () => {
    const events = [
      ...pendingAt('ord_a', 1, asOf),
      ...pendingAt('ord_b', 2, hours(24, -1)),
      ...pendingAt('ord_c', 3, hours(24)),
      ...pendingAt('ord_d', 4, hours(72, -1)),
      ...pendingAt('ord_e', 5, hours(72)),
      ...pendingAt('ord_f', 6, hours(168, -1)),
      ...pendingAt('ord_g', 7, hours(168)),
      ...pendingAt('ord_h', 8, hours(500)),
    ];
    expect(await computer(events).metric('APPROVAL_BACKLOG', { caps }, asOf)).toEqual({
      metric: 'APPROVAL_BACKLOG',
      value: 8,
      unit: 'orders',
      breakdown: [
        { dimension: 'under_24h', value: 2, unit: 'orders', minAgeHours: 0, maxAgeHours: 24 },
        { dimension: '24h_to_72h', value: 2, unit: 'orders', minAgeHours: 24, maxAgeHours: 72 },
        { dimension: '72h_to_168h', value: 2, unit: 'orders', minAgeHours: 72, maxAgeHours: 168 },
        { dimension: 'over_168h', value: 2, unit: 'orders', minAgeHours: 168, maxAgeHours: null },
      ],
      truncated: false,
    });
  });

  test('the clock starts when the order enters pending_approval; later stages do not restart it', async () => {
    const events = [
      ...pendingAt('ord_a', 1, hours(100)),
      ev('OrderApprovalGranted', { orderId: 'ord_a', stage: 'lead', approverId: 'mem_2' }, hours(90)),
      requestApproval('ord_a', hours(10), 'director'),
    ];
    const c = computer(events);
    expect((await c.metric('APPROVAL_BACKLOG', { caps }, asOf)).breakdown.map((row) => row.value)).toEqual([0, 0, 1, 0]);
    expect(await c.exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [
        {
          metric: 'APPROVAL_BACKLOG',
          priority: 40,
          drillDownType: 'order',
          drillDownId: 'ord_a',
          detectedAt: hours(100),
          reference: { orderId: 'ord_a', orderNumber: 1, clinicId: 'cli_1', band: '72h_to_168h' },
        },
      ],
    });
    // Leaving pending_approval and coming back restarts it.
    const back = [...events, approve('ord_a', hours(5)), requestApproval('ord_a', hours(2))];
    expect((await computer(back).exceptions({ cap: 10 }, asOf)).exceptions).toMatchObject([{ priority: 30, detectedAt: hours(2), reference: { band: 'under_24h' } }]);
  });

  test('APPROVAL_BACKLOG reads the oldest first, ties by order id bytes, up to caps.backlog', async () => {
    const events = [...pendingAt('ord_b', 1, hours(30)), ...pendingAt('ORD_Z', 2, hours(30)), ...pendingAt('ord_c', 3, hours(200))];
    const c = computer(events);
    const capped = await c.metric('APPROVAL_BACKLOG', { caps: { ...caps, backlog: 2 } }, asOf);
    expect(capped.value).toBe(2);
    expect(capped.truncated).toBe(true);
    expect(capped.breakdown.map((row) => row.value)).toEqual([0, 1, 0, 1]);
    const exact = await c.metric('APPROVAL_BACKLOG', { caps: { ...caps, backlog: 3 } }, asOf);
    expect([exact.value, exact.truncated]).toEqual([3, false]);
    // The report orders by priority, then detectedAt, then id bytes ('O' before 'o').
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions.map((e) => e.drillDownId)).toEqual(['ord_c', 'ORD_Z', 'ord_b']);
  });

  test('the clinic comparison lists opened clinics in byte order with their order counts', async () => {
    const events = [
      draft('ord_1', 1, 'cli_b', t(1)),
      clinic('cli_b', 'Beta', t(2)),
      clinic('cli_a', 'Alpha', t(2)),
      clinic('CLI_Z', 'Zed', t(2)),
      draft('ord_2', 2, 'cli_b', t(3)),
      submit('ord_2', t(3)),
      requestApproval('ord_2', t(3)),
      draft('ord_3', 3, 'cli_never_opened', t(3)),
      ev('ClinicRenamed', { clinicId: 'cli_a', name: 'Alpha Prime' }, t(4)),
      ev('ClinicStatusChanged', { clinicId: 'cli_a', status: 'inactive' }, t(4)),
      ev('ClinicRenamed', { clinicId: 'cli_unknown', name: 'Nobody' }, t(4)),
    ];
    const c = computer(events);
    expect(await c.comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [
        { clinicId: 'CLI_Z', clinicName: 'Zed', clinicStatus: 'active', totalOrders: 0, pendingApprovalOrders: 0 },
        { clinicId: 'cli_a', clinicName: 'Alpha Prime', clinicStatus: 'inactive', totalOrders: 0, pendingApprovalOrders: 0 },
        { clinicId: 'cli_b', clinicName: 'Beta', clinicStatus: 'active', totalOrders: 2, pendingApprovalOrders: 1 },
      ],
    });
    const capped = await c.comparison({ cap: 2 });
    expect(capped.truncated).toBe(true);
    expect(capped.clinics.map((x) => x.clinicId)).toEqual(['CLI_Z', 'cli_a']);
    expect((await c.comparison({ cap: 3 })).truncated).toBe(false);
  });
});

// ── DELIVERY_EXCEPTIONS and RECEIPT_DISCREPANCIES ──
describe('delivery exceptions and receipt discrepancies', () => {
  const shipped = (orderId: string, number: number) => [draft(orderId, number, 'cli_1', t(1)), submit(orderId, t(1)), approve(orderId, t(1)), dispatch(orderId, t(2))];

  test('a delivery exception is open until resolved by its id', async () => {
    const events = [
      ...shipped('ord_1', 11),
      raise('ord_1', 'exc_1', t(3)),
      raise('ord_1', 'exc_2', t(4)),
      resolve('ord_1', 'exc_1', t(5)),
      ...shipped('ord_2', 12),
      raise('ord_2', 'exc_3', t(3)),
    ];
    const c = computer(events);
    expect(await c.metric('DELIVERY_EXCEPTIONS', { caps }, asOf)).toEqual(counted('DELIVERY_EXCEPTIONS', 2));
    expect(await c.metric('DELIVERY_EXCEPTIONS', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(counted('DELIVERY_EXCEPTIONS', 1, true));
    expect((await c.exceptions({ cap: 10 }, asOf)).exceptions).toEqual([
      {
        metric: 'DELIVERY_EXCEPTIONS',
        priority: 90,
        drillDownType: 'fulfillment',
        drillDownId: 'ord_2',
        detectedAt: t(3),
        reference: { orderId: 'ord_2', orderNumber: 12, exceptionId: 'exc_3', reasonCode: 'delayed' },
      },
      {
        metric: 'DELIVERY_EXCEPTIONS',
        priority: 90,
        drillDownType: 'fulfillment',
        drillDownId: 'ord_1',
        detectedAt: t(4),
        reference: { orderId: 'ord_1', orderNumber: 11, exceptionId: 'exc_2', reasonCode: 'delayed' },
      },
    ]);
  });

  test('the latest receipt discrepancies are open until the fulfillment closes', async () => {
    const short = { lineId: 'l1', catalogItemId: 'itm_1', expectedQty: 5, receivedQty: 3, reasonCode: 'short' } as const;
    const damaged = { lineId: 'l2', catalogItemId: 'itm_2', expectedQty: 2, receivedQty: 1, reasonCode: 'damaged' } as const;
    const first = [...shipped('ord_1', 7), deliver('ord_1', t(3)), receive('ord_1', t(4), [short, damaged])];
    expect(await computer(first).metric('RECEIPT_DISCREPANCIES', { caps }, asOf)).toEqual(counted('RECEIPT_DISCREPANCIES', 2));
    expect(await computer(first).metric('RECEIPT_DISCREPANCIES', { caps: { ...caps, counts: 1 } }, asOf)).toEqual(
      counted('RECEIPT_DISCREPANCIES', 1, true),
    );
    const second = [...first, receive('ord_1', t(5), [damaged])];
    expect(await computer(second).exceptions({ cap: 10 }, asOf)).toEqual({
      total: 1,
      truncated: false,
      exceptions: [
        {
          metric: 'RECEIPT_DISCREPANCIES',
          priority: 50,
          drillDownType: 'fulfillment',
          drillDownId: 'ord_1',
          detectedAt: t(5),
          reference: { orderId: 'ord_1', orderNumber: 7, lineId: 'l2', catalogItemId: 'itm_2', expectedQty: 2, receivedQty: 1, reasonCode: 'damaged' },
        },
      ],
    });
    const closed = [...second, close('ord_1', t(6))];
    expect(await computer(closed).metric('RECEIPT_DISCREPANCIES', { caps }, asOf)).toEqual(counted('RECEIPT_DISCREPANCIES', 0));
  });
});

// ── ORDER_CYCLE_TIME ──
describe('order cycle time', () => {
  const window = { from: '2026-11-03T00:00:00.000Z', to: '2026-11-05T00:00:00.000Z' };

  test('stage samples fall on the day of their `to` milestone; the window is [from, to)', async () => {
    const events = [
      // ord_1: every milestone; received 2026-11-04 (in the window).
      draft('ord_1', 1, 'cli_1', t(1)),
      submit('ord_1', t(1, 8)),
      approve('ord_1', t(1, 10)),
      dispatch('ord_1', t(2, 8)),
      deliver('ord_1', t(3, 8)),
      receive('ord_1', t(4, 8)),
      // Later repeats are no milestones.
      receive('ord_1', t(4, 20)),
      // ord_2: received 2026-11-03 00:00 (first instant of the window), no approval milestone.
      draft('ord_2', 2, 'cli_1', t(1)),
      submit('ord_2', t(2)),
      dispatch('ord_2', t(2, 12)),
      deliver('ord_2', t(2, 18)),
      receive('ord_2', t(3)),
      // ord_3: delivered on the window's `to` day: outside.
      draft('ord_3', 3, 'cli_1', t(1)),
      submit('ord_3', t(4)),
      approve('ord_3', t(4, 23, 59)),
      dispatch('ord_3', t(4, 23, 59)),
      deliver('ord_3', t(5)),
    ];
    const result = await computer(events).metric('ORDER_CYCLE_TIME', { window, caps }, asOf);
    // submitted_to_received: ord_1 72h, ord_2 24h → 48h.
    expect(result).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: 48,
      unit: 'hours',
      breakdown: [
        { dimension: 'submitted_to_approved', value: 23.98, unit: 'hours', samples: 1 },
        { dimension: 'approved_to_dispatched', value: 0, unit: 'hours', samples: 1 },
        { dimension: 'dispatched_to_delivered', value: 24, unit: 'hours', samples: 1 },
        { dimension: 'delivered_to_received', value: 15, unit: 'hours', samples: 2 },
      ],
      truncated: false,
    });
  });

  test('a stage whose `from` milestone comes later in the log has no sample; no samples is null', async () => {
    const events = [draft('ord_1', 1, 'cli_1', t(1)), approve('ord_1', t(3)), submit('ord_1', t(4)), approve('ord_1', t(4, 5))];
    expect(await computer(events).metric('ORDER_CYCLE_TIME', { window, caps }, asOf)).toEqual({
      metric: 'ORDER_CYCLE_TIME',
      value: null,
      unit: 'hours',
      breakdown: [
        { dimension: 'submitted_to_approved', value: null, unit: 'hours', samples: 0 },
        { dimension: 'approved_to_dispatched', value: null, unit: 'hours', samples: 0 },
        { dimension: 'dispatched_to_delivered', value: null, unit: 'hours', samples: 0 },
        { dimension: 'delivered_to_received', value: null, unit: 'hours', samples: 0 },
      ],
      truncated: false,
    });
  });
});
