import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { boxesProjection } from '../../projections/boxes/projection.js';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../support/databases.js';
import { event, testTenant } from '../support/projectionTestBed.js';
import type { EventEnvelope } from '../../src/events/index.js';
import type { RecordedEvent } from '../../src/eventStore/eventStore.js';
import { sql } from '../../src/platform/sql.js';
import { applyBatchInTransaction, type BatchTarget } from '../../src/projecting/applyBatch.js';
import { CheckpointConflictError, ensureActiveGenerations, loadGenerations } from '../../src/projecting/generations.js';

function recorded(events: readonly EventEnvelope[], firstSeq: bigint): RecordedEvent[] {
  return events.map((e, index) => ({
    position: { tx: 10n, seq: firstSeq + BigInt(index) },
    streamName: `supply.box-${e.tenantId}.b-1`,
    streamRevision: BigInt(index),
    eventId: e.eventId,
    type: e.type,
    schemaVersion: e.schemaVersion,
    tenantId: e.tenantId,
    occurredAt: e.occurredAt,
    recordedAt: e.occurredAt,
    data: e.data,
  }));
}

const movement = (movementId: string, quantityDelta: number) =>
  event('StockMovementRecorded', {
    movementId,
    type: 'receive',
    boxId: 'b-1',
    catalogItemId: 'item-1',
    quantityDelta,
    actorId: 'm-1',
    occurredAt: '2026-11-01T09:00:00.000Z',
  });

describe('checkpoints move by compare-and-set in the batch transaction', () => {
  // Each test starts from a database of its own whose generation has applied nothing yet.
  let database: TestDatabase | undefined;
  let initial: BatchTarget | undefined;
  const first = recorded(
    [
      event('BoxRegistered', { boxId: 'b-1', code: 'BX-1', catalogItemId: 'item-1', warehouseId: 'w-1', status: 'active', origin: { type: 'purchase' } }),
      movement('mv-1', 10),
    ],
    1n,
  );
  const second = recorded([movement('mv-2', 5)], 3n);

  const onHand = () =>
    database?.pool.oneFirst(sql.type(z.object({ onHand: z.bigint() }))`
      SELECT on_hand AS "onHand" FROM read_models.boxes WHERE tenant_id = ${testTenant} AND box_id = 'b-1'
    `);
  const checkpoint = async () => (await loadGenerations(database?.pool ?? failNoDatabase(), ['active']))[0]?.checkpoint;

  beforeEach(async () => {
    database = await createPostgresTestDatabase();
    await ensureActiveGenerations(database.pool, [boxesProjection]);
    const generation = (await loadGenerations(database.pool, ['active']))[0];
    if (!generation) throw new Error('no generation');
    initial = { projection: boxesProjection, generation };
  });
  afterEach(async () => {
    await database?.close();
    database = undefined;
    initial = undefined;
  });

  test('two projectors applying the same batch at once: one commits, the other rolls back; the rows change once', async () => {
    if (!database || !initial) throw new Error('no database');
    const { pool } = database;
    const target = initial;
    const outcomes = await Promise.allSettled(
      [0, 1].map(() => pool.transaction((tx) => applyBatchInTransaction(tx, [target], first, 'live', silentLogger))),
    );
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = outcomes.find((o) => o.status === 'rejected');
    expect(rejected?.status === 'rejected' ? rejected.reason : undefined).toBeInstanceOf(CheckpointConflictError);
    expect(await onHand()).toBe(10n);
    expect(await checkpoint()).toEqual({ tx: 10n, seq: 2n });
  });

  test('a stale projector can neither apply a batch again nor move the checkpoint back', async () => {
    if (!database || !initial) throw new Error('no database');
    const { pool } = database;
    // Given the first batch applied by a projector that has since moved on.
    const firstTarget = initial;
    await pool.transaction((tx) => applyBatchInTransaction(tx, [firstTarget], first, 'live', silentLogger));
    expect(await checkpoint()).toEqual({ tx: 10n, seq: 2n });
    const current = (await loadGenerations(pool, ['active']))[0];
    if (!current) throw new Error('no generation');
    await pool.transaction((tx) => applyBatchInTransaction(tx, [{ projection: boxesProjection, generation: current }], second, 'live', silentLogger));
    expect(await checkpoint()).toEqual({ tx: 10n, seq: 3n });

    // Still holding the generation as it was before the first batch.
    const stale = initial;
    await expect(pool.transaction((tx) => applyBatchInTransaction(tx, [stale], [...first, ...second], 'live', silentLogger))).rejects.toBeInstanceOf(
      CheckpointConflictError,
    );
    expect(await onHand()).toBe(15n);
    expect(await checkpoint()).toEqual({ tx: 10n, seq: 3n });
  });
});

function failNoDatabase(): never {
  throw new Error('no database');
}
