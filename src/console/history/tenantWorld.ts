import type { ItemTemplate } from './dentalCatalog.js';

/** The state of one simulated organisation, as far as the next events depend on it. */
export type MemberRole = 'owner' | 'admin' | 'purchasing' | 'clinician' | 'warehouse' | 'viewer';

export type Member = {
  readonly id: string;
  readonly name: string;
  readonly role: MemberRole;
  readonly permissions: readonly string[];
  readonly clinicIds: readonly string[];
  /** Central warehouse a warehouse member works in. */
  readonly warehouseId?: string;
  active: boolean;
};

export type Warehouse = { readonly id: string; readonly name: string; readonly kind: 'central' | 'express'; readonly clinicId?: string };

export type Clinic = {
  readonly id: string;
  name: string;
  /** Relative size (chairs): scales its daily activity. */
  readonly size: number;
  /** Whether it places implants (and so orders and keeps implantology items). */
  readonly surgery: boolean;
  readonly express: Warehouse;
  /** The central warehouse that normally serves it. */
  readonly central: Warehouse;
  open: boolean;
};

export type Item = {
  readonly id: string;
  readonly sku: string;
  readonly name: string;
  readonly categoryId: string;
  readonly template: ItemTemplate;
  readonly tracksExpiry: boolean;
  status: 'active' | 'inactive' | 'discontinued';
  reorderPoint: number;
  /** Consumption events per clinic-day at clinic size 1. */
  readonly usesPerDay: number;
  /** Item units used per clinic-day at clinic size 1 (daily items) or per case (case items). */
  readonly dailyUse: number;
  /** Quantity of one purchased box. */
  readonly caseQty: number;
  /** Minor units per one item unit; undefined when no cost is recorded. */
  unitCost: number | undefined;
};

export type BoxStatus = 'active' | 'quarantined' | 'depleted' | 'expired' | 'disposed';

export type Box = {
  readonly id: string;
  readonly streamName: string;
  readonly code: string;
  readonly item: Item;
  warehouseId: string;
  onHand: number;
  reserved: number;
  status: BoxStatus;
  readonly lot: string | undefined;
  /** Serials still in the box (serial-tracked items), in the order they are taken out. */
  serials: string[] | undefined;
  readonly expiresOn: string | undefined;
  readonly expiresAtMs: number | undefined;
  /** Expired stock nobody has got round to disposing of yet (so it shows at asOf). */
  readonly disposalOverdue: boolean;
};

export type TenantWorld = {
  readonly members: Member[];
  readonly clinics: Clinic[];
  readonly centrals: Warehouse[];
  readonly items: Item[];
  readonly couriers: readonly string[];
  readonly currency: 'EUR' | 'USD';
  readonly domain: string;
  /** Live boxes (active, with stock) per item and warehouse, first to expire first. */
  readonly stock: Map<string, Map<string, Box[]>>;
  /** Active members by kind of lookup and id; cleared whenever someone joins, leaves or comes back. */
  readonly roster: Map<string, Map<string, Member[]>>;
  /** Boxes whose expiry date the daily check must watch. */
  expiryWatch: Box[];
  /** Open order quantity per destination warehouse and item. */
  readonly onOrder: Map<string, number>;
  /** Purchased quantity on its way per central warehouse and item. */
  readonly inbound: Map<string, number>;
  /** Quantity orders could not get from a central warehouse, until purchasing has reordered it. */
  readonly shortages: Map<string, number>;
  nextOrderNumber: number;
  nextPurchaseNumber: number;
};

export const stockKey = (warehouseId: string, itemId: string): string => `${warehouseId}|${itemId}`;

export function createTenantWorld(currency: 'EUR' | 'USD', domain: string, couriers: readonly string[]): TenantWorld {
  return {
    members: [],
    clinics: [],
    centrals: [],
    items: [],
    couriers,
    currency,
    domain,
    stock: new Map(),
    roster: new Map(),
    expiryWatch: [],
    onOrder: new Map(),
    inbound: new Map(),
    shortages: new Map(),
    nextOrderNumber: 1,
    nextPurchaseNumber: 1,
  };
}

const noBoxes: readonly Box[] = Object.freeze([]);

export function liveBoxes(world: TenantWorld, warehouseId: string, itemId: string): readonly Box[] {
  return world.stock.get(itemId)?.get(warehouseId) ?? noBoxes;
}

/** Live boxes of every item in one warehouse. */
export function boxesIn(world: TenantWorld, warehouseId: string): Box[] {
  const found: Box[] = [];
  for (const byWarehouse of world.stock.values()) found.push(...(byWarehouse.get(warehouseId) ?? noBoxes));
  return found;
}

/** Puts a box among the live boxes of its warehouse, keeping first-expiry-first-out order. */
export function indexBox(world: TenantWorld, box: Box): void {
  let byWarehouse = world.stock.get(box.item.id);
  if (byWarehouse === undefined) {
    byWarehouse = new Map();
    world.stock.set(box.item.id, byWarehouse);
  }
  const boxes = byWarehouse.get(box.warehouseId);
  if (boxes === undefined) {
    byWarehouse.set(box.warehouseId, [box]);
    return;
  }
  const expiry = box.expiresAtMs ?? Number.POSITIVE_INFINITY;
  let index = boxes.length;
  while (index > 0) {
    const previous = boxes[index - 1];
    if (previous === undefined || (previous.expiresAtMs ?? Number.POSITIVE_INFINITY) <= expiry) break;
    index -= 1;
  }
  boxes.splice(index, 0, box);
}

export function unindexBox(world: TenantWorld, box: Box): void {
  const byWarehouse = world.stock.get(box.item.id);
  const boxes = byWarehouse?.get(box.warehouseId);
  if (byWarehouse === undefined || boxes === undefined) return;
  const index = boxes.indexOf(box);
  if (index >= 0) boxes.splice(index, 1);
  if (boxes.length === 0) byWarehouse.delete(box.warehouseId);
}

export const available = (box: Box): number => box.onHand - box.reserved;

/** Stock that may be used or allocated at `atMs`: active, unexpired (with a margin) and not reserved. */
export function usableQuantity(world: TenantWorld, warehouseId: string, itemId: string, atMs: number, marginMs = 0): number {
  let total = 0;
  for (const box of liveBoxes(world, warehouseId, itemId)) {
    if (isUsable(box, atMs, marginMs)) total += available(box);
  }
  return total;
}

export function isUsable(box: Box, atMs: number, marginMs = 0): boolean {
  return box.status === 'active' && available(box) > 0 && (box.expiresAtMs === undefined || box.expiresAtMs > atMs + marginMs);
}

export function addTo(map: Map<string, number>, key: string, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}

/** Changes whether a member can act, and forgets the cached rosters. */
export function setMemberActive(world: TenantWorld, member: Member, active: boolean): void {
  member.active = active;
  world.roster.clear();
}

/** Active members matching `filter`, cached under (kind, id) until the roster changes. */
export function rosterOf(world: TenantWorld, kind: string, id: string, filter: (member: Member) => boolean): Member[] {
  let byId = world.roster.get(kind);
  if (byId === undefined) {
    byId = new Map();
    world.roster.set(kind, byId);
  }
  let found = byId.get(id);
  if (found === undefined) {
    found = world.members.filter((m) => m.active && filter(m));
    byId.set(id, found);
  }
  return found;
}
