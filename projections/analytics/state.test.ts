import { describe, expect, it } from 'vitest';
import type { DeliveryExceptionRow } from './schema.js';
import { AnalyticsState, boxState, levelId } from './state.js';

const tenantId = 'tenant-state';
const box = (state: AnalyticsState, boxId: string, catalogItemId: string) => {
  const row = boxState({ tenantId, boxId, catalogItemId, warehouseId: 'wh_1', status: 'active', onHand: 1, reserved: 0, expiresOn: null }, state.batch);
  state.boxes.keep(tenantId, boxId, row);
  return row;
};
const level = (catalogItemId: string) => ({ tenantId, catalogItemId, warehouseId: 'wh_1', available: 0, detectedAt: null, priority: null });
const item = (state: AnalyticsState, itemId: string) =>
  state.items.keep(tenantId, itemId, { tenantId, itemId, name: itemId, unitOfMeasure: 'unit', reorderPoint: 1, status: 'active', changedIn: 0, used: state.batch });

describe('AnalyticsState', () => {
  it('over its bound drops the least recently used rows, down to three quarters of the bound', () => {
    const state = new AnalyticsState(4);
    for (const id of ['box_1', 'box_2', 'box_3', 'box_4']) box(state, id, 'itm_1');
    state.settle();
    box(state, 'box_5', 'itm_1');
    const used = state.boxes.get(tenantId, 'box_1');
    if (used !== undefined) used.used = state.batch;
    state.settle();
    expect(state.boxes.size).toBe(3);
    expect(['box_1', 'box_2', 'box_3', 'box_4', 'box_5'].filter((id) => state.boxes.get(tenantId, id) !== undefined)).toEqual(['box_1', 'box_4', 'box_5']);
  });

  it('never folds a box into a stock level it dropped: the box finds the level the state holds now', () => {
    const state = new AnalyticsState(1);
    const held = box(state, 'box_1', 'itm_1');
    const dropped = state.levelOf(held);
    state.settle();
    state.keepLevel(level('itm_2'), false);
    state.settle();
    expect(state.levels.get(tenantId, levelId('itm_1', 'wh_1'))).toBeUndefined();
    const now = state.levelOf(held);
    expect(now).not.toBe(dropped);
    expect(state.levels.get(tenantId, levelId('itm_1', 'wh_1'))).toBe(now);
  });

  it('drops the levels of an item it drops, so that a level it holds always has its item beside it', () => {
    const state = new AnalyticsState(1);
    item(state, 'itm_1');
    const first = state.keepLevel(level('itm_1'), false);
    state.settle();
    item(state, 'itm_2');
    state.keepLevel(level('itm_2'), false);
    state.settle();
    expect(state.items.get(tenantId, 'itm_1')).toBeUndefined();
    expect(first.evicted).toBe(true);
    expect(state.levels.get(tenantId, levelId('itm_1', 'wh_1'))).toBeUndefined();
    expect(state.levelsByItem.get(tenantId, 'itm_1')).toBeUndefined();
  });

  it('stops holding every row (and the open exceptions) once it drops one', () => {
    const state = new AnalyticsState(2);
    state.complete = true;
    const open: DeliveryExceptionRow = { tenantId, orderId: 'ord_1', exceptionId: 'exc_1', orderNumber: 1, reasonCode: 'delayed', detectedAt: '2026-11-01T09:00:00.000Z' };
    state.exceptions.set('exc', { ids: [tenantId, 'ord_1', 'exc_1'], open });
    box(state, 'box_1', 'itm_1');
    state.settle();
    expect(state.complete).toBe(true);
    expect(state.openExceptions.get('exc')).toBe(open);
    box(state, 'box_2', 'itm_1');
    box(state, 'box_3', 'itm_1');
    state.settle();
    expect(state.complete).toBe(false);
    expect(state.openExceptions.size).toBe(0);
  });
});
