import { streams, type EventData } from '../../events/index.js';
import { iso, isoDay, type TenantContext } from './tenantContext.js';
import { indexBox, unindexBox, type Box, type BoxStatus, type Item } from './tenantWorld.js';

type MovementType = 'receive' | 'consume' | 'issue' | 'transfer' | 'adjust' | 'reserve' | 'release' | 'dispose' | 'return';

export type MovementInput = {
  readonly type: MovementType;
  readonly quantityDelta: number;
  readonly reservedDelta?: number;
  readonly actorId: string;
  /** Required for high-value items (two-person rule); the caller names the witness. */
  readonly secondActorId?: string;
  readonly fromWarehouseId?: string;
  readonly toWarehouseId?: string;
  readonly reasonCode?: string;
  readonly correlationId?: string;
  readonly splitId?: string;
  /** Given for system-driven movements; scanners and tablets send one most of the time. */
  readonly idempotencyKey?: string;
  /** When it happened physically, if earlier than its recording (offline devices). */
  readonly occurredAtMs?: number;
};

const codeAlphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const digits = '0123456789';

/** Appends one ledger entry to a box and applies it to the box's state. */
export function recordMovement(ctx: TenantContext, box: Box, input: MovementInput): void {
  const reservedDelta = input.reservedDelta ?? 0;
  const onHand = box.onHand + input.quantityDelta;
  const reserved = box.reserved + reservedDelta;
  if (onHand < 0 || reserved < 0 || reserved > onHand) {
    throw new Error(`movement ${input.type} would leave box ${box.id} at onHand ${onHand}, reserved ${reserved}`);
  }
  const idempotencyKey = input.idempotencyKey ?? (ctx.rng.chance(0.85) ? ctx.ids.uuid() : undefined);
  // Built field by field rather than with spreads: this runs for most of a million events.
  const data: EventData<'StockMovementRecorded'> = {
    movementId: ctx.ids.id('mov'),
    type: input.type,
    boxId: box.id,
    catalogItemId: box.item.id,
    quantityDelta: input.quantityDelta,
    actorId: input.actorId,
    occurredAt: input.occurredAtMs === undefined || input.occurredAtMs >= ctx.now() ? ctx.isoNow() : iso(input.occurredAtMs),
  };
  if (input.reservedDelta !== undefined) data.reservedDelta = input.reservedDelta;
  if (input.secondActorId !== undefined) data.witnessId = input.secondActorId;
  if (input.fromWarehouseId !== undefined) data.fromWarehouseId = input.fromWarehouseId;
  if (input.toWarehouseId !== undefined) data.toWarehouseId = input.toWarehouseId;
  if (input.reasonCode !== undefined) data.reasonCode = input.reasonCode;
  if (idempotencyKey !== undefined) data.idempotencyKey = idempotencyKey;
  if (input.correlationId !== undefined) data.correlationId = input.correlationId;
  if (input.splitId !== undefined) data.splitId = input.splitId;
  ctx.emit(box.streamName, 'StockMovementRecorded', data);
  box.onHand = onHand;
  box.reserved = reserved;
  if (input.type === 'transfer' && input.toWarehouseId !== undefined && input.toWarehouseId !== box.warehouseId) {
    // A transfer moves the whole box: its stock, and from now on its warehouse.
    const wasIndexed = box.status === 'active';
    if (wasIndexed) unindexBox(ctx.world, box);
    box.warehouseId = input.toWarehouseId;
    if (wasIndexed) indexBox(ctx.world, box);
  }
  // A disposal names its own end status (disposed), every other way of emptying a box depletes it.
  if (onHand === 0 && box.status === 'active' && input.type !== 'dispose') {
    setBoxStatus(ctx, box, 'depleted');
  }
}

export function setBoxStatus(ctx: TenantContext, box: Box, status: BoxStatus, reasonCode?: string): void {
  ctx.emit(box.streamName, 'BoxStatusChanged', {
    boxId: box.id,
    status,
    ...(reasonCode === undefined ? {} : { reasonCode }),
  });
  if (box.status === 'active' && status !== 'active') unindexBox(ctx.world, box);
  if (box.status !== 'active' && status === 'active') indexBox(ctx.world, box);
  box.status = status;
}

export type NewBox = {
  readonly item: Item;
  readonly warehouseId: string;
  readonly quantity: number;
  readonly origin: { readonly type: 'purchase' | 'order' | 'transfer' | 'count'; readonly reference?: string };
  readonly lot?: string;
  readonly serials?: string[];
  readonly expiresAtMs?: number;
  readonly disposalOverdue?: boolean;
  /** The receive movement that brings the stock in. */
  readonly receipt: Omit<MovementInput, 'type' | 'quantityDelta'>;
};

/** Registers a new box and receives its stock with one `receive` movement. */
export function registerBox(ctx: TenantContext, spec: NewBox): Box {
  const { item } = spec;
  const expiresAtMs = item.tracksExpiry ? spec.expiresAtMs : undefined;
  const boxId = ctx.ids.id('box');
  const box: Box = {
    id: boxId,
    streamName: streams.box(ctx.tenantId, boxId),
    code: `BX-${ctx.ids.chars(4, codeAlphabet)}-${ctx.ids.chars(4, codeAlphabet)}`,
    item,
    warehouseId: spec.warehouseId,
    onHand: 0,
    reserved: 0,
    status: 'active',
    lot: item.template.tracksLot ? (spec.lot ?? newLot(ctx)) : undefined,
    serials: item.template.tracksSerial ? (spec.serials ?? newSerials(ctx, item, spec.quantity)) : undefined,
    expiresAtMs,
    expiresOn: expiresAtMs === undefined ? undefined : isoDay(expiresAtMs),
    disposalOverdue: spec.disposalOverdue ?? false,
  };
  ctx.emit(box.streamName, 'BoxRegistered', {
    boxId: box.id,
    code: box.code,
    catalogItemId: item.id,
    warehouseId: box.warehouseId,
    status: 'active',
    ...(box.lot === undefined ? {} : { lot: box.lot }),
    ...(box.serials === undefined ? {} : { serials: [...box.serials] }),
    ...(box.expiresOn === undefined ? {} : { expiresOn: box.expiresOn }),
    origin: spec.origin,
  });
  indexBox(ctx.world, box);
  if (box.expiresAtMs !== undefined) ctx.world.expiryWatch.push(box);
  recordMovement(ctx, box, { ...spec.receipt, type: 'receive', quantityDelta: spec.quantity });
  return box;
}

/** A manufacturer lot number such as `L2509-4821`. */
export function newLot(ctx: TenantContext): string {
  const month = iso(ctx.now()).slice(2, 7).replace('-', '');
  return `L${month}-${ctx.ids.chars(4, digits)}`;
}

export function newSerials(ctx: TenantContext, item: Item, quantity: number): string[] {
  const prefix = item.sku.split('-').slice(0, 2).join('');
  return Array.from({ length: quantity }, () => `${prefix}-${ctx.ids.chars(9, digits)}`);
}

/** Takes serials out of a box along with its quantity (the first ones first). */
export function takeSerials(box: Box, quantity: number): string[] | undefined {
  if (box.serials === undefined) return undefined;
  const taken = box.serials.slice(0, quantity);
  box.serials = box.serials.slice(quantity);
  return taken;
}

/** Moves a whole box (all of its stock) to another warehouse. */
export function transferBox(
  ctx: TenantContext,
  box: Box,
  toWarehouseId: string,
  by: { readonly actorId: string; readonly secondActorId?: string; readonly reasonCode: string },
): void {
  recordMovement(ctx, box, {
    type: 'transfer',
    quantityDelta: 0,
    actorId: by.actorId,
    ...(by.secondActorId === undefined ? {} : { secondActorId: by.secondActorId }),
    fromWarehouseId: box.warehouseId,
    toWarehouseId,
    reasonCode: by.reasonCode,
    correlationId: ctx.ids.id('trf'),
  });
}
