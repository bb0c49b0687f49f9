import type { EventEnvelope } from '../events/index.js';

/** One box as its stream tells it: where it is and what it holds. */
export type BoxView = {
  readonly boxId: string;
  readonly code: string;
  readonly catalogItemId: string;
  readonly warehouseId: string;
  readonly status: string;
  readonly onHand: number;
  readonly reserved: number;
  readonly lot: string | undefined;
  /** Serials still in the box: they leave first in, first out. */
  readonly serials: readonly string[] | undefined;
  readonly expiresOn: string | undefined;
};

export function boxView(events: readonly EventEnvelope[]): BoxView | undefined {
  let view: BoxView | undefined;
  let registeredSerials: readonly string[] | undefined;
  for (const event of events) {
    if (event.type === 'BoxRegistered') {
      const { boxId, code, catalogItemId, warehouseId, status, lot, serials, expiresOn } = event.data;
      registeredSerials = serials;
      view = { boxId, code, catalogItemId, warehouseId, status, onHand: 0, reserved: 0, lot, serials, expiresOn };
    } else if (view !== undefined && event.type === 'BoxStatusChanged') {
      view = { ...view, status: event.data.status };
    } else if (view !== undefined && event.type === 'StockMovementRecorded') {
      const movement = event.data;
      const movedWhole = movement.type === 'transfer' && movement.toWarehouseId !== undefined;
      view = {
        ...view,
        onHand: view.onHand + movement.quantityDelta,
        reserved: view.reserved + (movement.reservedDelta ?? 0),
        warehouseId: movedWhole && movement.toWarehouseId !== undefined ? movement.toWarehouseId : view.warehouseId,
      };
    }
  }
  if (view === undefined || registeredSerials === undefined) return view;
  return { ...view, serials: registeredSerials.slice(Math.max(0, registeredSerials.length - view.onHand)) };
}
