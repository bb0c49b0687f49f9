import { expiryIgnoredBoxStatuses, type CycleStage } from '../../src/analytics/definitions.js';
import type { BoxRow, ClinicRow, DeliveryExceptionRow, ItemRow, OrderRow, StockLevelRow, WarehouseRow } from './schema.js';

/**
 * What the state keeps beside each row's columns: the batch that last changed it (this batch: it
 * is in its table's `changed` list; a stamp, so that nothing is reset after a write) and the batch
 * that last used it (the least recently used go first when a table is over its bound).
 */
type Kept = { changedIn: number; used: number };

export type ItemState = ItemRow & Kept;
export type WarehouseState = WarehouseRow & Kept;
export type ClinicState = ClinicRow & Kept;
export type OrderState = OrderRow & Kept;
/**
 * `id` is the level's key within its tenant (levelId); `evicted` once the state let it go; `item`
 * and `warehouse` as last found (an item or warehouse leaves the state only with its levels).
 */
export type LevelState = StockLevelRow &
  Kept & { readonly id: string; evicted: boolean; item: ItemState | undefined; warehouse: WarehouseState | undefined };
/**
 * `level`: the box's stock level as last resolved (a reference instead of a key looked up at every
 * movement); levelOf checks it still belongs to the state, and a transfer clears it.
 */
export type BoxState = BoxRow & Kept & { expiringOn: string | null; level: LevelState | undefined };

export type Discrepancy = {
  lineId: string;
  catalogItemId: string;
  expectedQty: number;
  receivedQty: number;
  reasonCode: string;
};

/** `batch`: the batch that made the entry (an item remembers its latest entry across events). */
export type ConsumptionDelta = {
  readonly tenantId: string;
  readonly catalogItemId: string;
  readonly unit: string;
  readonly day: string;
  quantity: number;
  movements: number;
  readonly batch: number;
};
type CycleDelta = { tenantId: string; day: string; stage: CycleStage; samples: number; totalMs: number };
type DiscrepancyList = { tenantId: string; orderId: string; orderNumber: number; detectedAt: string; entries: Discrepancy[] };

/** The key of a stock level within its tenant. */
export function levelId(catalogItemId: string, warehouseId: string): string {
  return `${catalogItemId}\u0000${warehouseId}`;
}

/**
 * A table's rows as the state holds them, by tenant then id (the ids of the events look the rows
 * up as they are: no key is built per event), and the rows changed since the last write.
 */
export class Table<Row extends Kept> {
  private readonly byTenant = new Map<string, Map<string, Row>>();
  private count = 0;
  /** The batch being folded, as changedIn counts it (from 1, as AnalyticsState.batch). */
  private batch = 1;
  changed: Row[] = [];

  get size(): number {
    return this.count;
  }

  get(tenantId: string, id: string): Row | undefined {
    return this.byTenant.get(tenantId)?.get(id);
  }

  /** A row read from the table (unchanged). */
  keep(tenantId: string, id: string, row: Row): void {
    let rows = this.byTenant.get(tenantId);
    if (rows === undefined) this.byTenant.set(tenantId, (rows = new Map()));
    if (!rows.has(id)) this.count += 1;
    rows.set(id, row);
  }

  /** A row the batch created. */
  add(tenantId: string, id: string, row: Row): void {
    this.keep(tenantId, id, row);
    this.touch(row);
  }

  /** The row was changed in place. */
  touch(row: Row): void {
    if (row.changedIn === this.batch) return;
    row.changedIn = this.batch;
    this.changed.push(row);
  }

  /** After the batch is written: the next batch begins with nothing changed. */
  settle(): void {
    this.batch += 1;
    this.changed = [];
  }

  /**
   * Over `bound` rows: drops the least recently used (all are clean after a write) down to three
   * quarters of the bound, so that this happens once in many batches. Returns the rows dropped.
   */
  evict(bound: number): Row[] {
    if (this.count <= bound) return [];
    const all: { tenantId: string; id: string; row: Row }[] = [];
    for (const [tenantId, rows] of this.byTenant) for (const [id, row] of rows) all.push({ tenantId, id, row });
    all.sort((a, b) => a.row.used - b.row.used);
    const dropped = all.slice(0, this.count - Math.floor((bound * 3) / 4));
    for (const { tenantId, id } of dropped) this.remove(tenantId, id);
    return dropped.map((entry) => entry.row);
  }

  remove(tenantId: string, id: string): void {
    const rows = this.byTenant.get(tenantId);
    if (rows?.delete(id) !== true) return;
    this.count -= 1;
    if (rows.size === 0) this.byTenant.delete(tenantId);
  }
}

/** Stock levels by tenant and item (or warehouse), for the re-evaluations of an item or warehouse change. */
class LevelIndex {
  private readonly byTenant = new Map<string, Map<string, Set<LevelState>>>();

  get(tenantId: string, id: string): ReadonlySet<LevelState> | undefined {
    return this.byTenant.get(tenantId)?.get(id);
  }

  add(tenantId: string, id: string, level: LevelState): void {
    let ids = this.byTenant.get(tenantId);
    if (ids === undefined) this.byTenant.set(tenantId, (ids = new Map()));
    let levels = ids.get(id);
    if (levels === undefined) ids.set(id, (levels = new Set()));
    levels.add(level);
  }

  remove(tenantId: string, id: string, level: LevelState): void {
    const ids = this.byTenant.get(tenantId);
    const levels = ids?.get(id);
    if (ids === undefined || levels === undefined) return;
    levels.delete(level);
    if (levels.size > 0) return;
    ids.delete(id);
    if (ids.size === 0) this.byTenant.delete(tenantId);
  }
}

/**
 * The rows a batch reads and changes. A live batch starts from an empty state and loads what its
 * events touch; a rebuild keeps one state for the whole log (the tables are its own and every
 * batch it wrote has committed), bounded by `rowsKept` rows a table: past the bound the least
 * recently used rows go (they are written already) and are read back if a later batch touches
 * them. A level in the state always has its item and warehouse beside it (when they exist): an
 * item or warehouse that goes takes its levels with it.
 */
export class AnalyticsState {
  readonly items = new Table<ItemState>();
  readonly warehouses = new Table<WarehouseState>();
  readonly clinics = new Table<ClinicState>();
  readonly boxes = new Table<BoxState>();
  readonly levels = new Table<LevelState>();
  readonly levelsByItem = new LevelIndex();
  readonly levelsByWarehouse = new LevelIndex();
  readonly orders = new Table<OrderState>();
  /** Delivery exceptions the batch touched: the open row, or null once resolved. */
  exceptions = new Map<string, { readonly ids: readonly [string, string, string]; open: DeliveryExceptionRow | null }>();
  /** Keys of the touched exceptions that were open before the batch. */
  exceptionsBefore = new Set<string>();
  /** Orders whose discrepancies the batch replaced (received) or removed (closed): the final list. */
  discrepancies = new Map<string, DiscrepancyList>();
  consumption = new Map<string, ConsumptionDelta>();
  /** An item's latest consumption entry (usually the next consume of the item adds to it). */
  latestConsumption = new WeakMap<ItemState, ConsumptionDelta>();
  cycles = new Map<string, CycleDelta>();
  /** The batch being folded, counted from 1: what `used` refers to. */
  batch = 1;
  /**
   * The state holds every row of the tables (a rebuild that began on empty tables and has not
   * dropped a row yet): a row it does not hold does not exist, so nothing is read. The open
   * delivery exceptions are then kept here too.
   */
  complete = false;
  readonly openExceptions = new Map<string, DeliveryExceptionRow>();

  // A bound that even a short log passes in its busiest tables (boxes, orders), so that a longer
  // log holds no more: with 20 000 the 1x bench log stayed below it in orders and the 4x log did
  // not, and the rebuild's peak RSS grew with the log. The price is the rows read back once let
  // go, which cost more per event on the longer logs (docs/benchmarks.md, "What grows with the log").
  constructor(readonly rowsKept = 5_000) {}

  /** A stock level read from the table or created by the batch. */
  keepLevel(row: StockLevelRow, created: boolean): LevelState {
    const id = levelId(row.catalogItemId, row.warehouseId);
    const level: LevelState = { ...row, id, evicted: false, item: undefined, warehouse: undefined, changedIn: 0, used: this.batch };
    if (created) this.levels.add(row.tenantId, level.id, level);
    else this.levels.keep(row.tenantId, level.id, level);
    this.levelsByItem.add(row.tenantId, row.catalogItemId, level);
    this.levelsByWarehouse.add(row.tenantId, row.warehouseId, level);
    return level;
  }

  /** The box's stock level in the state, created (at zero) if there is none. */
  levelOf(box: BoxState): LevelState {
    const known = box.level;
    if (known !== undefined && !known.evicted) {
      known.used = this.batch;
      return known;
    }
    const { tenantId, catalogItemId, warehouseId } = box;
    const level =
      this.levels.get(tenantId, levelId(catalogItemId, warehouseId)) ??
      this.keepLevel({ tenantId, catalogItemId, warehouseId, available: 0, detectedAt: null, priority: null }, true);
    box.level = level;
    return level;
  }

  /** After the batch is written: the per-batch changes go, the rows stay up to the bound. */
  settle(): void {
    for (const table of [this.items, this.warehouses, this.clinics, this.boxes, this.levels, this.orders] as Table<Kept>[]) table.settle();
    if (this.complete) {
      for (const [key, exception] of this.exceptions) {
        if (exception.open === null) this.openExceptions.delete(key);
        else this.openExceptions.set(key, exception.open);
      }
    }
    const dropped: Kept[] = [...this.clinics.evict(this.rowsKept), ...this.boxes.evict(this.rowsKept), ...this.orders.evict(this.rowsKept)];
    for (const level of this.levels.evict(this.rowsKept)) dropped.push(this.forgetLevel(level));
    for (const item of this.items.evict(this.rowsKept)) {
      dropped.push(item);
      for (const level of [...(this.levelsByItem.get(item.tenantId, item.itemId) ?? [])]) dropped.push(this.forgetLevel(level));
    }
    for (const warehouse of this.warehouses.evict(this.rowsKept)) {
      dropped.push(warehouse);
      for (const level of [...(this.levelsByWarehouse.get(warehouse.tenantId, warehouse.warehouseId) ?? [])]) dropped.push(this.forgetLevel(level));
    }
    if (this.complete && (dropped.length > 0 || this.openExceptions.size > this.rowsKept)) {
      this.complete = false;
      this.openExceptions.clear();
    }
    this.exceptions = new Map();
    this.exceptionsBefore = new Set();
    this.discrepancies = new Map();
    this.consumption = new Map();
    this.cycles = new Map();
    this.batch += 1;
  }

  private forgetLevel(level: LevelState): LevelState {
    level.evicted = true;
    this.levels.remove(level.tenantId, level.id);
    this.levelsByItem.remove(level.tenantId, level.catalogItemId, level);
    this.levelsByWarehouse.remove(level.tenantId, level.warehouseId, level);
    return level;
  }
}

export function boxState(box: BoxRow, batch: number): BoxState {
  return { ...box, expiringOn: expiringOn(box), level: undefined, changedIn: 0, used: batch };
}

/** The expiry date while the box counts for EXPIRING_STOCK, else null. */
export function expiringOn(box: Pick<BoxRow, 'expiresOn' | 'onHand' | 'status'>): string | null {
  if (box.expiresOn === null || box.onHand <= 0 || expiryIgnoredBoxStatuses.includes(box.status)) return null;
  return box.expiresOn;
}
