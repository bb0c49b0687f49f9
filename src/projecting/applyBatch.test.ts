import { describe, expect, test } from 'vitest';
import type { RecordedEvent } from '../eventStore/eventStore.js';
import { decodeBatch } from './applyBatch.js';

const stored = (schemaVersion: number, data: Record<string, unknown>, seq: bigint): RecordedEvent => ({
  position: { tx: 10n, seq },
  streamName: 'supply.box-ws_1.box_1',
  streamRevision: seq,
  eventId: `00000000-0000-4000-8000-00000000000${seq}`,
  type: 'StockMovementRecorded',
  schemaVersion,
  tenantId: 'ws_1',
  occurredAt: '2026-11-01T08:00:00.000Z',
  recordedAt: '2026-11-01T08:00:00.001Z',
  data,
});
const movement = { movementId: 'mov_1', type: 'consume', boxId: 'box_1', catalogItemId: 'itm_1', quantityDelta: -1, actorId: 'mem_1', occurredAt: '2026-11-01T08:00:00.000Z' };

describe('decodeBatch', () => {
  test('the trusted read gives an older event as the strict decode does: data upcast, current version; a current one is handed on as stored', () => {
    const events = [stored(1, { ...movement, secondActorId: 'mem_2' }, 1n), stored(2, { ...movement, movementId: 'mov_2', witnessId: 'mem_2' }, 2n)];
    const trusted = decodeBatch(events, 'trusted');
    const strict = decodeBatch(events, 'strict');
    // The trusted read's events are the stored ones (a superset of the strict envelope's fields).
    expect(trusted.projected).toMatchObject(strict.projected);
    expect(trusted.projected[0]).toMatchObject({ schemaVersion: 2, data: { witnessId: 'mem_2' } });
    expect(trusted.projected[1]).toBe(events[1]);
    // The stored event is left as it was.
    expect(events[0]?.schemaVersion).toBe(1);
  });
});
