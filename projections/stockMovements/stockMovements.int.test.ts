import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventData } from '../../src/events/index.js';
import { createProjectionTestBed, event, otherTenant, rawEvent, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { stockMovementsProjection } from './projection.js';
import { listBoxMovements } from './queries.js';

type Movement = EventData<'StockMovementRecorded'>;

/** A movement recorded at `recordedAt` (the envelope's time, which the test bed also records it at). */
function recorded(movementId: string, boxId: string, fields: Partial<Movement> & { recordedAt?: string } = {}, tenantId = testTenant) {
  const { recordedAt = '2026-11-01T10:00:00.000Z', ...data } = fields;
  return event(
    'StockMovementRecorded',
    {
      movementId,
      type: 'receive',
      boxId,
      catalogItemId: 'item-gloves',
      quantityDelta: 10,
      actorId: 'member-ana',
      occurredAt: '2026-11-01T09:00:00.000Z',
      ...data,
    },
    { tenantId, occurredAt: recordedAt },
  );
}

describe('stock_movements projection', () => {
  let bed: ProjectionTestBed;
  beforeAll(async () => {
    bed = await createProjectionTestBed([stockMovementsProjection]);
  });
  afterAll(async () => bed?.close());

  it('given movements of a box, lists each whole, with optional fields absent when not recorded', async () => {
    await bed.project([
      recorded('mov-rcv', 'box-1', { occurredAt: '2026-11-01T08:15:30.250Z', recordedAt: '2026-11-01T08:20:00.000Z' }),
      recorded('mov-other-box', 'box-2'),
      recorded('mov-trf', 'box-1', {
        type: 'transfer',
        quantityDelta: 0,
        reservedDelta: 0,
        actorId: 'member-ana',
        witnessId: 'member-bea',
        fromWarehouseId: 'w-central',
        toWarehouseId: 'w-express',
        reasonCode: 'rebalance',
        idempotencyKey: 'idem-1',
        correlationId: 'trf-1',
        splitId: 'split-1',
        occurredAt: '2026-11-02T11:00:00.000Z',
        recordedAt: '2026-11-02T11:00:01.000Z',
      }),
    ]);

    const movements = await listBoxMovements(bed.pool, testTenant, 'box-1');
    expect(movements).toEqual([
      {
        movementId: 'mov-rcv',
        type: 'receive',
        boxId: 'box-1',
        catalogItemId: 'item-gloves',
        quantityDelta: 10,
        actorId: 'member-ana',
        occurredAt: '2026-11-01T08:15:30.250Z',
        recordedAt: '2026-11-01T08:20:00.000Z',
      },
      {
        movementId: 'mov-trf',
        type: 'transfer',
        boxId: 'box-1',
        catalogItemId: 'item-gloves',
        quantityDelta: 0,
        actorId: 'member-ana',
        occurredAt: '2026-11-02T11:00:00.000Z',
        recordedAt: '2026-11-02T11:00:01.000Z',
        reservedDelta: 0,
        secondActorId: 'member-bea',
        fromWarehouseId: 'w-central',
        toWarehouseId: 'w-express',
        reasonCode: 'rebalance',
        idempotencyKey: 'idem-1',
        correlationId: 'trf-1',
        splitId: 'split-1',
      },
    ]);
    for (const field of ['reservedDelta', 'secondActorId', 'fromWarehouseId', 'toWarehouseId', 'reasonCode', 'idempotencyKey', 'correlationId', 'splitId']) {
      expect(Object.hasOwn(movements[0] ?? {}, field), field).toBe(false);
    }
    expect(await listBoxMovements(bed.pool, testTenant, 'box-unknown')).toEqual([]);
  });

  it('lists oldest first by occurredAt even when recorded out of that order, ties in log order', async () => {
    await bed.project([
      recorded('mov-o-3', 'box-order', { type: 'consume', quantityDelta: -2, occurredAt: '2026-11-03T09:00:00.000Z', recordedAt: '2026-11-03T09:00:00.000Z' }),
      // Offline devices sync late: these happened before the movement above was recorded.
      recorded('mov-o-1', 'box-order', { occurredAt: '2026-11-01T07:00:00.000Z', recordedAt: '2026-11-03T12:00:00.000Z' }),
      recorded('mov-o-2b', 'box-order', { type: 'consume', quantityDelta: -1, occurredAt: '2026-11-02T09:00:00.000Z', recordedAt: '2026-11-03T12:00:00.000Z' }),
    ]);
    await bed.project([
      recorded('mov-o-2a', 'box-order', { type: 'consume', quantityDelta: -3, occurredAt: '2026-11-02T09:00:00.000Z', recordedAt: '2026-11-03T12:00:05.000Z' }),
    ]);

    const ids = (await listBoxMovements(bed.pool, testTenant, 'box-order')).map((m) => m.movementId);
    expect(ids).toEqual(['mov-o-1', 'mov-o-2b', 'mov-o-2a', 'mov-o-3']);
  });

  it('keeps tenants apart, even under the same box and movement ids', async () => {
    await bed.project([
      recorded('mov-shared', 'box-shared', { quantityDelta: 5 }),
      recorded('mov-shared', 'box-shared', { quantityDelta: 9 }, otherTenant),
      recorded('mov-only-b', 'box-only-b', {}, otherTenant),
    ]);

    expect((await listBoxMovements(bed.pool, testTenant, 'box-shared')).map((m) => m.quantityDelta)).toEqual([5]);
    expect((await listBoxMovements(bed.pool, otherTenant, 'box-shared')).map((m) => m.quantityDelta)).toEqual([9]);
    expect(await listBoxMovements(bed.pool, testTenant, 'box-only-b')).toEqual([]);
  });

  it('dead-letters a repeated movement id, in the same batch or a later one, and a broken event, and applies the rest', async () => {
    await bed.project([recorded('mov-dup', 'box-dl', { quantityDelta: 10 })]);
    const letters = await bed.project([
      recorded('mov-dup', 'box-dl', { quantityDelta: 99 }),
      recorded('mov-dl-1', 'box-dl', { type: 'consume', quantityDelta: -1 }),
      recorded('mov-dl-1', 'box-dl', { type: 'consume', quantityDelta: -7 }),
      rawEvent('StockMovementRecorded', { movementId: 'mov-bad', boxId: 'box-dl' }),
      recorded('mov-dl-2', 'box-dl', { type: 'consume', quantityDelta: -2 }),
    ]);

    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['StockMovementRecorded', 'stock_movements'],
      ['StockMovementRecorded', 'stock_movements'],
      ['StockMovementRecorded', 'stock_movements'],
    ]);
    expect(letters[0]?.error).toMatch(/stock movement recorded twice: .*mov-dup/);
    expect(letters[1]?.error).toMatch(/stock movement recorded twice: .*mov-dl-1/);
    const movements = await listBoxMovements(bed.pool, testTenant, 'box-dl');
    expect(movements.map((m) => [m.movementId, m.quantityDelta])).toEqual([
      ['mov-dup', 10],
      ['mov-dl-1', -1],
      ['mov-dl-2', -2],
    ]);
  });

  it('gives the same tables one event at a time as in batches', async () => {
    await bed.project(
      Array.from({ length: 7 }, (_, index) => recorded(`mov-batch-${index}`, `box-batch-${index % 3}`, { quantityDelta: index + 1 })),
      { batchSize: 3 },
    );
    for (const row of await bed.oneByOneDigestsMatch()) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
