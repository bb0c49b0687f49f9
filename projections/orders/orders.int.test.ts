import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { orderState } from '../../src/console/orderState.js';
import type { EventData, EventEnvelope } from '../../src/events/index.js';
import { slonikRowReader } from '../../src/platform/projectionReader.js';
import { sql } from '../../src/platform/sql.js';
import { createProjectionTestBed, event, otherTenant, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { ordersProjection } from './projection.js';
import { getOrder, listOrders, type ListOrdersOptions } from './queries.js';
import { orderListItem, orderListRow, type OrderListItem } from './schema.js';

const at = (minute: number): string => new Date(Date.UTC(2026, 10, 1, 9, minute)).toISOString();

const costedLine = {
  lineId: 'lin_1',
  catalogItemId: 'itm_implant',
  sku: 'IMP-BLT-41X10MM',
  name: 'Bone-level tapered implant, 4.1 × 10 mm',
  requestedQty: 2,
  unitOfMeasure: 'unit',
  categoryId: 'cat_implantology',
  highValue: true,
  unitCost: 21_500,
  currency: 'EUR',
};
const uncostedLine = {
  lineId: 'lin_2',
  catalogItemId: 'itm_gauze',
  sku: 'GAU-10X10',
  name: 'Sterile gauze 10 × 10 cm',
  requestedQty: 5,
  unitOfMeasure: 'box',
  categoryId: 'cat_consumables',
  highValue: false,
};
const patientRef = 'PT-7731904';
const plan = {
  policyVersion: 2,
  requiresApproval: true,
  steps: [
    { stage: 'clinical_lead', requiredScope: 'clinical.approve', minApprovers: 1 },
    { stage: 'finance', requiredScope: 'orders.approve_high_value', minApprovers: 1 },
  ],
  evaluatedValue: 987_321,
  currency: 'EUR',
};

type Options = { tenantId?: string; occurredAt?: string };

function drafted(orderId: string, number: number, options: Options = {}, extra: Partial<EventData<'OrderDrafted'>> = {}): EventEnvelope {
  return event(
    'OrderDrafted',
    {
      orderId,
      number,
      type: 'general',
      requesterId: 'mem_requester',
      clinicId: 'cli_centro',
      destinationWarehouseId: 'wh_express_centro',
      lines: [uncostedLine],
      ...extra,
      lineCount: (extra.lines ?? [uncostedLine]).length,
    },
    options,
  );
}

/** The whole life of one clinical order: two approval stages, an exception, a receipt with a discrepancy. */
function clinicalOrderLife(orderId: string, tenantId = testTenant): EventEnvelope[] {
  const o = (minute: number): Options => ({ tenantId, occurredAt: at(minute) });
  return [
    drafted(orderId, 41, o(0), {
      type: 'clinical',
      requesterId: 'mem_clinician',
      preferredSourceWarehouseId: 'wh_central',
      justification: 'Implant surgery on Thursday',
      patientRef,
      lines: [costedLine, uncostedLine],
      value: 987_321,
      currency: 'EUR',
    }),
    event('OrderSubmitted', { orderId, submittedBy: 'mem_clinician', approvalPlan: plan }, o(1)),
    event('OrderApprovalRequested', { orderId, stage: 'clinical_lead' }, o(2)),
    event('OrderApprovalGranted', { orderId, stage: 'clinical_lead', approverId: 'mem_lead' }, o(3)),
    event('OrderApprovalRequested', { orderId, stage: 'finance' }, o(4)),
    event('OrderApprovalGranted', { orderId, stage: 'finance', approverId: 'mem_owner' }, o(5)),
    event('OrderApproved', { orderId }, o(6)),
    event('OrderAllocated', { orderId, sourceWarehouseId: 'wh_central', allocations: [{ lineId: 'lin_1', boxId: 'box_1', quantity: 2 }] }, o(7)),
    event('OrderPickingStarted', { orderId, pickerId: 'mem_picker' }, o(8)),
    event(
      'FulfillmentDispatched',
      { orderId, fulfillmentId: 'ful_1', sourceWarehouseId: 'wh_central', destinationWarehouseId: 'wh_express_centro', dispatchedBy: 'mem_picker', boxIds: ['box_1'] },
      o(9),
    ),
    event('DeliveryExceptionRaised', { orderId, exceptionId: 'exc_1', reasonCode: 'delayed', description: 'Missed the slot', reportedBy: 'crr_1' }, o(10)),
    event('DeliveryExceptionResolved', { orderId, exceptionId: 'exc_1', resolution: 'redelivered', resolvedBy: 'mem_buyer' }, o(11)),
    event('FulfillmentDelivered', { orderId, deliveredBy: 'crr_1', receivedBy: 'mem_clinician', deliveredAt: at(12) }, o(12)),
    event(
      'FulfillmentReceived',
      {
        orderId,
        receivedBy: 'mem_clinician',
        receivedAt: at(13),
        lines: [
          { lineId: 'lin_1', catalogItemId: 'itm_implant', receivedQty: 1 },
          { lineId: 'lin_2', catalogItemId: 'itm_gauze', receivedQty: 5 },
        ],
        discrepancies: [{ lineId: 'lin_1', catalogItemId: 'itm_implant', expectedQty: 2, receivedQty: 1, reasonCode: 'damaged' }],
      },
      o(13),
    ),
    event('FulfillmentClosed', { orderId, closedBy: 'mem_buyer', outcome: 'partial' }, o(14)),
  ];
}

const storedRows = z.object({ row: z.unknown() });

let bed: ProjectionTestBed;
beforeAll(async () => {
  bed = await createProjectionTestBed([ordersProjection]);
});
afterAll(async () => bed?.close());

/** Projects the whole clinical order life into `tenantId`, in the batches the life test uses. */
async function projectLife(orderId: string, tenantId: string): Promise<EventEnvelope[]> {
  const life = clinicalOrderLife(orderId, tenantId);
  await bed.project(life.slice(0, 5));
  await bed.project(life.slice(5), { batchSize: 4 });
  return life;
}

/** The list's rows with each item parsed from the JSON text the list sends. */
async function listed(tenantId: string, options: ListOrdersOptions) {
  return (await listOrders(slonikRowReader(bed.pool), tenantId, options)).map((row) => ({ seq: row.seq, item: JSON.parse(row.itemJson) as OrderListItem }));
}

describe('orders projection', () => {
  it('given a whole order life, returns the order with lines and plan, and the status and version the console fold gives', async () => {
    const life = clinicalOrderLife('ord_life');
    await bed.project(life.slice(0, 5));
    await bed.project(life.slice(5), { batchSize: 4 });

    const order = await getOrder(slonikRowReader(bed.pool), testTenant, 'ord_life', { includeCost: false });
    expect(order).toEqual({
      orderId: 'ord_life',
      number: 41,
      type: 'clinical',
      status: 'closed',
      requesterId: 'mem_clinician',
      clinicId: 'cli_centro',
      destinationWarehouseId: 'wh_express_centro',
      preferredSourceWarehouseId: 'wh_central',
      justification: 'Implant surgery on Thursday',
      lines: [
        {
          lineId: 'lin_1',
          catalogItemId: 'itm_implant',
          sku: 'IMP-BLT-41X10MM',
          name: 'Bone-level tapered implant, 4.1 × 10 mm',
          requestedQty: 2,
          unitOfMeasure: 'unit',
          category: 'cat_implantology',
          highValue: true,
        },
        { lineId: 'lin_2', catalogItemId: 'itm_gauze', sku: 'GAU-10X10', name: 'Sterile gauze 10 × 10 cm', requestedQty: 5, unitOfMeasure: 'box', category: 'cat_consumables', highValue: false },
      ],
      approvalPlan: { policyVersion: 2, requiresApproval: true, steps: plan.steps, currency: 'EUR' },
      version: 12,
    });
    const folded = orderState(life);
    expect({ status: order?.status, version: order?.version }).toEqual({ status: folded?.status, version: folded?.version });
  });

  it('counts only actual status changes in the version, also when the repeated status arrives in a later batch', async () => {
    const orderId = 'ord_stages';
    await bed.project([drafted(orderId, 42), event('OrderSubmitted', { orderId, submittedBy: 'mem_requester', approvalPlan: plan }), event('OrderApprovalRequested', { orderId, stage: 'manager' })]);
    expect((await getOrder(slonikRowReader(bed.pool), testTenant, orderId, { includeCost: false }))?.version).toBe(3);

    await bed.project([event('OrderApprovalGranted', { orderId, stage: 'manager', approverId: 'mem_manager' })]);
    await bed.project([event('OrderApprovalRequested', { orderId, stage: 'finance' })]);
    expect(await getOrder(slonikRowReader(bed.pool), testTenant, orderId, { includeCost: false })).toMatchObject({ status: 'pending_approval', version: 3 });

    await bed.project([event('OrderRejected', { orderId, stage: 'finance', approverId: 'mem_owner', reason: 'Over budget' })]);
    expect(await getOrder(slonikRowReader(bed.pool), testTenant, orderId, { includeCost: false })).toMatchObject({ status: 'rejected', version: 4 });
  });

  it('keeps the first time the order entered a status, from the event times only', async () => {
    const tenantId = 'tenant-times';
    await projectLife('ord_life', tenantId);
    const rows = await bed.pool.any(sql.type(z.object({ createdAt: z.string(), updatedAt: z.string(), submittedAt: z.string(), dispatchedAt: z.string(), receivedAt: z.string(), closedAt: z.string() }))`
      SELECT created_at AS "createdAt", updated_at AS "updatedAt", submitted_at AS "submittedAt", dispatched_at AS "dispatchedAt",
        received_at AS "receivedAt", closed_at AS "closedAt"
      FROM read_models.orders
      WHERE tenant_id = ${tenantId} AND order_id = 'ord_life'
    `);
    // Dispatched again after the exception was resolved (minute 11): the first dispatch stays.
    expect(rows).toEqual([{ createdAt: at(0), updatedAt: at(14), submittedAt: at(1), dispatchedAt: at(9), receivedAt: at(13), closedAt: at(14) }]);
  });

  it('never stores order value, currency, patient reference or the evaluated value of the plan', async () => {
    const tenantId = 'tenant-secrets';
    await projectLife('ord_life', tenantId);
    const rows = await bed.pool.any(sql.type(storedRows)`
      SELECT to_jsonb(o) AS row FROM read_models.orders AS o WHERE tenant_id = ${tenantId}
      UNION ALL
      SELECT to_jsonb(l) AS row FROM read_models.order_lines AS l WHERE tenant_id = ${tenantId}
    `);
    const stored = JSON.stringify(rows);
    expect(rows.length).toBeGreaterThan(0);
    expect(stored).toContain('IMP-BLT-41X10MM');
    for (const secret of [patientRef, '987321', 'evaluatedValue', 'patientRef', '"value"']) expect(stored).not.toContain(secret);
  });

  it('shows line cost and currency only with includeCost, and only on lines that have them', async () => {
    const tenantId = 'tenant-cost';
    await projectLife('ord_life', tenantId);
    const withCost = await getOrder(slonikRowReader(bed.pool), tenantId, 'ord_life', { includeCost: true });
    expect(withCost?.lines).toEqual([
      {
        lineId: 'lin_1',
        catalogItemId: 'itm_implant',
        sku: 'IMP-BLT-41X10MM',
        name: 'Bone-level tapered implant, 4.1 × 10 mm',
        requestedQty: 2,
        unitOfMeasure: 'unit',
        category: 'cat_implantology',
        highValue: true,
        unitCost: 21_500,
        currency: 'EUR',
      },
      { lineId: 'lin_2', catalogItemId: 'itm_gauze', sku: 'GAU-10X10', name: 'Sterile gauze 10 × 10 cm', requestedQty: 5, unitOfMeasure: 'box', category: 'cat_consumables', highValue: false },
    ]);
    const withoutCost = await getOrder(slonikRowReader(bed.pool), tenantId, 'ord_life', { includeCost: false });
    expect(withoutCost?.lines).toHaveLength(2);
    for (const line of withoutCost?.lines ?? []) expect(Object.keys(line)).not.toContain('unitCost');
    for (const line of withoutCost?.lines ?? []) expect(Object.keys(line)).not.toContain('currency');
  });

  it('leaves optional fields absent, not null, on a draft', async () => {
    const tenantId = 'tenant-draft';
    await bed.project([drafted('ord_plain', 1, { tenantId })]);
    expect(await getOrder(slonikRowReader(bed.pool), tenantId, 'ord_plain', { includeCost: true })).toEqual({
      orderId: 'ord_plain',
      number: 1,
      type: 'general',
      status: 'draft',
      requesterId: 'mem_requester',
      clinicId: 'cli_centro',
      destinationWarehouseId: 'wh_express_centro',
      lines: [{ lineId: 'lin_2', catalogItemId: 'itm_gauze', sku: 'GAU-10X10', name: 'Sterile gauze 10 × 10 cm', requestedQty: 5, unitOfMeasure: 'box', category: 'cat_consumables', highValue: false }],
      version: 1,
    });
  });

  it('lists orders oldest first by creation, filtered by status, with list items only', async () => {
    const tenantId = 'tenant-list';
    const t = { tenantId };
    await bed.project([
      drafted('ord_z', 3, t),
      drafted('ord_a', 1, t),
      drafted('ord_m', 2, t),
      event('OrderSubmitted', { orderId: 'ord_a', submittedBy: 'mem_requester', approvalPlan: { ...plan, requiresApproval: false, steps: [] } }, t),
      event('OrderCancelled', { orderId: 'ord_m', cancelledBy: 'mem_requester' }, t),
    ]);
    expect(await listed(tenantId, { limit: 10 })).toEqual([
      { seq: 1n, item: { orderId: 'ord_z', number: 3, type: 'general', status: 'draft', requesterId: 'mem_requester', clinicId: 'cli_centro', destinationWarehouseId: 'wh_express_centro', version: 1 } },
      { seq: 2n, item: { orderId: 'ord_a', number: 1, type: 'general', status: 'submitted', requesterId: 'mem_requester', clinicId: 'cli_centro', destinationWarehouseId: 'wh_express_centro', version: 2 } },
      { seq: 3n, item: { orderId: 'ord_m', number: 2, type: 'general', status: 'cancelled', requesterId: 'mem_requester', clinicId: 'cli_centro', destinationWarehouseId: 'wh_express_centro', version: 2 } },
    ]);
    expect((await listed(tenantId, { limit: 10, status: 'cancelled' })).map((r) => r.item.orderId)).toEqual(['ord_m']);
    expect(await listed(tenantId, { limit: 10, status: 'closed' })).toEqual([]);
  });

  it('pages by creation sequence: an order created between pages appears at the end and nothing repeats', async () => {
    const tenantId = 'tenant-paging';
    await bed.project(['ord_e', 'ord_d', 'ord_c', 'ord_b', 'ord_a'].map((orderId, i) => drafted(orderId, 100 + i, { tenantId })), { batchSize: 2 });
    const seen: string[] = [];
    let afterSeq: bigint | undefined;
    for (let page = 0; page < 10; page += 1) {
      const rows = await listed(tenantId, { limit: 2, ...(afterSeq === undefined ? {} : { afterSeq }) });
      const items = rows.slice(0, 2);
      seen.push(...items.map((r) => r.item.orderId));
      if (page === 0) await bed.project([drafted('ord_0_new', 1, { tenantId })]);
      if (rows.length <= 2) break;
      afterSeq = items.at(-1)?.seq;
    }
    expect(seen).toEqual(['ord_e', 'ord_d', 'ord_c', 'ord_b', 'ord_a', 'ord_0_new']);
  });

  it('keeps tenants apart: the same order id in two tenants, and no reads across them', async () => {
    await bed.project([drafted('ord_shared', 7, { tenantId: otherTenant }), drafted('ord_shared', 8)]);
    await bed.project([event('OrderCancelled', { orderId: 'ord_shared', cancelledBy: 'mem_requester' }, { tenantId: otherTenant })]);
    expect(await getOrder(slonikRowReader(bed.pool), testTenant, 'ord_shared', { includeCost: false })).toMatchObject({ number: 8, status: 'draft', version: 1 });
    expect(await getOrder(slonikRowReader(bed.pool), otherTenant, 'ord_shared', { includeCost: false })).toMatchObject({ number: 7, status: 'cancelled', version: 2 });
    expect(await getOrder(slonikRowReader(bed.pool), otherTenant, 'ord_life', { includeCost: false })).toBeUndefined();
    expect((await listed(otherTenant, { limit: 50 })).map((r) => r.item.orderId)).toEqual(['ord_shared']);
  });

  it('dead-letters events about orders that were never drafted, and a second draft, and applies the rest of the batch', async () => {
    const tenantId = 'tenant-dead';
    const t = { tenantId };
    const letters = await bed.project([
      drafted('ord_ok', 1, t),
      event('OrderSubmitted', { orderId: 'ord_ghost', submittedBy: 'mem_requester', approvalPlan: plan }, t),
      event('FulfillmentDelivered', { orderId: 'ord_ghost', deliveredBy: 'crr_1', receivedBy: 'mem_clinician', deliveredAt: at(1) }, t),
      drafted('ord_ok', 2, t),
      event('OrderCancelled', { orderId: 'ord_ok', cancelledBy: 'mem_requester' }, t),
      drafted('ord_ok_2', 3, t),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['OrderSubmitted', 'orders'],
      ['FulfillmentDelivered', 'orders'],
      ['OrderDrafted', 'orders'],
    ]);
    expect(letters[0]?.error).toMatch(/never drafted/);
    expect(letters[2]?.error).toMatch(/drafted twice/);
    expect((await listed(tenantId, { limit: 10 })).map((r) => [r.seq, r.item.orderId, r.item.number, r.item.status])).toEqual([
      [1n, 'ord_ok', 1, 'cancelled'],
      [2n, 'ord_ok_2', 3, 'draft'],
    ]);
  });

  it('dead-letters a transition the order state machine does not allow: the order keeps its status and version, and later allowed events apply', async () => {
    const tenantId = 'tenant-machine';
    const t = (minute: number) => ({ tenantId, occurredAt: at(minute) });
    const life = clinicalOrderLife('ord_back', tenantId);
    const throughAllocated = life.slice(0, 8);
    const [picking, dispatched, delivered] = [life[8], life[9], life[12]];
    const [received, closed] = [life[13], life[14]];
    if (!picking || !dispatched || !delivered || !received || !closed) throw new Error('the order life is shorter than expected');
    const letters = await bed.project([
      ...throughAllocated,
      picking,
      dispatched,
      delivered,
      received,
      // Appended after the fulfillment was received: picking again would send the order back.
      event('OrderPickingStarted', { orderId: 'ord_back', pickerId: 'mem_picker' }, t(20)),
      closed,
      // Out of a final status.
      event('OrderCancelled', { orderId: 'ord_back', cancelledBy: 'mem_buyer' }, t(30)),
      drafted('ord_skip', 2, t(31)),
      // A draft is never dispatched before it was submitted, approved, allocated and picked.
      event(
        'FulfillmentDispatched',
        { orderId: 'ord_skip', fulfillmentId: 'ful_2', sourceWarehouseId: 'wh_central', destinationWarehouseId: 'wh_express_centro', dispatchedBy: 'mem_picker', boxIds: ['box_2'] },
        t(32),
      ),
      event('OrderCancelled', { orderId: 'ord_skip', cancelledBy: 'mem_requester' }, t(33)),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['OrderPickingStarted', 'orders'],
      ['OrderCancelled', 'orders'],
      ['FulfillmentDispatched', 'orders'],
    ]);
    expect(letters[0]?.error).toBe('OrderPickingStarted would move order tenant-machine/ord_back from partially_fulfilled to picking, which the order state machine does not allow');
    expect(letters[1]?.error).toMatch(/from closed to cancelled/);
    expect(letters[2]?.error).toMatch(/from draft to dispatched/);
    // Versions count the allowed changes only: draft 1 … allocated 5, picking 6, dispatched 7, delivered 8, partially_fulfilled 9, closed 10.
    const orders = await listed(tenantId, { limit: 10 });
    expect(orders.map((r) => [r.item.orderId, r.item.status, r.item.version])).toEqual([
      ['ord_back', 'closed', 10],
      ['ord_skip', 'cancelled', 2],
    ]);
  });

  it('stores each list item as the JSON text JSON.stringify makes of it, whatever characters its ids hold', async () => {
    const tenantId = 'tenant-odd';
    const odd = ['ord-"q"', 'ord-\\b', 'ord-\u0001\n', 'ord-ü😀\u2028'];
    await bed.project(odd.map((orderId, index) => drafted(orderId, 40 + index, { tenantId }, { requesterId: `mem-"${index}"`, clinicId: 'cli-\t', destinationWarehouseId: 'wh-\u007f' })));
    const rows = await listOrders(slonikRowReader(bed.pool), tenantId, { limit: 10 });
    expect(rows.map((row) => (JSON.parse(row.itemJson) as OrderListItem).orderId)).toEqual(odd);
    for (const row of rows) {
      const item = JSON.parse(row.itemJson) as OrderListItem;
      const order = await getOrder(slonikRowReader(bed.pool), tenantId, item.orderId, { includeCost: false });
      // Byte for byte the serialisation of the list item's fields read from the columns.
      expect(row.itemJson).toBe(JSON.stringify(orderListItem.strip().parse(order)));
    }
    expect(orderListRow.safeParse({ seq: 1n, itemJson: rows[0]?.itemJson.replace('"number":40', '"number": 40') }).success).toBe(false);
  });

  it('gives the same tables one event at a time as in batches', async () => {
    // Its own events, so the comparison covers a whole life and list rows whatever ran before.
    const tenantId = 'tenant-digest';
    await projectLife('ord_life', tenantId);
    await bed.project([drafted('ord_a', 1, { tenantId }), drafted('ord_b', 2, { tenantId }), event('OrderCancelled', { orderId: 'ord_a', cancelledBy: 'mem_requester' }, { tenantId })]);
    for (const row of await bed.oneByOneDigestsMatch()) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});

describe('the order list of a generation built before item_json (orders version 1)', () => {
  it('reads the page from the columns, with the same rows', async () => {
    const tenantId = 'tenant-version-1';
    await projectLife('ord_life', tenantId);
    await bed.project([drafted('ord_a', 1, { tenantId }), drafted('ord_b', 2, { tenantId, occurredAt: at(20) }, { lines: [costedLine, uncostedLine] })]);
    const list = () => listOrders(slonikRowReader(bed.pool), tenantId, { limit: 50 });
    const stored = await list();
    expect(stored).toHaveLength(3);
    const columns = sql.fragment`tenant_id, order_id, creation_seq, number, type, status, requester_id, clinic_id, destination_warehouse_id,
      preferred_source_warehouse_id, justification, approval_plan, version, created_at, updated_at, submitted_at, approved_at,
      dispatched_at, delivered_at, received_at, closed_at`;
    await bed.pool.query(sql.typeAlias('void')`ALTER VIEW read_models.orders RENAME TO orders_current`);
    try {
      // What the view of a version-1 generation shows: every column but item_json.
      await bed.pool.query(sql.typeAlias('void')`CREATE VIEW read_models.orders AS SELECT ${columns} FROM read_models.orders_current`);
      expect(await list()).toEqual(stored);
    } finally {
      await bed.pool.query(sql.typeAlias('void')`DROP VIEW IF EXISTS read_models.orders`);
      await bed.pool.query(sql.typeAlias('void')`ALTER VIEW read_models.orders_current RENAME TO orders`);
    }
  });
});
