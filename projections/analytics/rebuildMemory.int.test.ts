import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/events/index.js';
import { createProjectionTestBed, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { at, tenantEvents } from '../../test/support/analyticsProjectionEvents.js';
import { analyticsProjection, createAnalyticsProjection } from './projection.js';

/**
 * Two tenants' worth of boxes moving between warehouses, items and warehouses changing status,
 * orders through their life with a delivery exception and discrepancies: rows touched again many
 * events after they were last seen.
 */
function history(): EventEnvelope[] {
  const events: EventEnvelope[] = [];
  for (const tenantId of ['tenant-mem-a', 'tenant-mem-b']) {
    const e = tenantEvents(tenantId);
    events.push(e.item('itm_1', at(1), { reorderPoint: 20 }), e.item('itm_2', at(1), { reorderPoint: 5, unitOfMeasure: 'box' }));
    events.push(e.warehouse('wh_1', at(1)), e.warehouse('wh_2', at(1)), e.warehouse('wh_3', at(1)), e.clinic('cli_1', 'Clinic', at(1)));
    // A level that no later movement touches: only the item's revision below changes it.
    events.push(e.box('box_7', 'itm_1', 'wh_3', at(1, 9)), e.move('box_7', 'itm_1', 'receive', 30, at(1, 9, 30)));
    for (let box = 1; box <= 6; box += 1) {
      const item = box % 2 === 0 ? 'itm_2' : 'itm_1';
      events.push(e.box(`box_${box}`, item, 'wh_1', at(1, 10), { expiresOn: `2026-11-${10 + box}` }));
      events.push(e.move(`box_${box}`, item, 'receive', 10 * box, at(1, 11)));
    }
    for (let round = 0; round < 3; round += 1) {
      for (let box = 1; box <= 6; box += 1) {
        const item = box % 2 === 0 ? 'itm_2' : 'itm_1';
        events.push(e.move(`box_${box}`, item, 'consume', -2, at(2 + round, 9, box)));
        if (box === round + 2) events.push(e.move(`box_${box}`, item, 'transfer', 0, at(2 + round, 12), { fromWarehouseId: 'wh_1', toWarehouseId: 'wh_2' }));
      }
      if (round === 1) events.push(e.itemStatus('itm_2', 'inactive', at(3, 13)), e.warehouseStatus('wh_2', 'inactive', at(3, 14)));
      if (round === 2) events.push(e.itemStatus('itm_2', 'active', at(4, 13)), e.revise('itm_1', at(4, 14), { reorderPoint: 400 }));
    }
    events.push(e.boxStatus('box_1', 'quarantined', at(5)), e.move('box_1', 'itm_1', 'dispose', -4, at(5, 1)));
    events.push(e.drafted('ord_1', 1, 'cli_1', at(2)), e.submitted('ord_1', at(2, 1)), e.requested('ord_1', at(2, 2)));
    events.push(e.approved('ord_1', at(3)), e.allocated('ord_1', at(3, 1)), e.picking('ord_1', at(3, 2)), e.dispatched('ord_1', at(3, 3)));
    events.push(e.raised('ord_1', 'exc_1', at(3, 4)), e.raised('ord_1', 'exc_2', at(3, 5)), e.drafted('ord_2', 2, 'cli_1', at(3, 6)));
    events.push(e.resolved('ord_1', 'exc_1', at(4)), e.delivered('ord_1', at(4, 1)));
    const short = { lineId: 'lin_1', catalogItemId: 'itm_1', expectedQty: 3, receivedQty: 2, reasonCode: 'short' as const };
    events.push(e.received('ord_1', at(4, 2), [short]), e.submitted('ord_2', at(4, 3)), e.closed('ord_1', at(5)));
  }
  return events;
}

describe('analytics rebuild memory', () => {
  let small: ProjectionTestBed;
  let regular: ProjectionTestBed;

  beforeAll(async () => {
    // A bound of 2 rows a table: nearly every batch drops rows and reads them back.
    small = await createProjectionTestBed([createAnalyticsProjection({ rowsKept: 2 })]);
    regular = await createProjectionTestBed([analyticsProjection]);
  });
  afterAll(async () => {
    await small?.close();
    await regular?.close();
  });

  it('gives the same tables when a rebuild drops its least recently used rows and reads them back', async () => {
    await small.project(history(), { batchSize: 7 });
    const rows = await small.oneByOneDigestsMatch({ rebuild: true });
    expect(rows.length).toBe(analyticsProjection.tables.length);
    for (const row of rows) expect(row.oneByOne, row.table).toBe(row.batched);
  });

  it('gives the same tables when a rebuild holds every row and reads nothing (open exceptions kept in memory)', async () => {
    await regular.project(history(), { batchSize: 7 });
    const rows = await regular.oneByOneDigestsMatch({ rebuild: true });
    expect(rows.length).toBe(analyticsProjection.tables.length);
    for (const row of rows) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
