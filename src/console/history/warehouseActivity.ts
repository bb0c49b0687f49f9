import { clinicStaff, warehouseStaff, witness } from './actors.js';
import { allocationShelfMarginMs } from './orderSteps.js';
import { newLot, recordMovement, registerBox, setBoxStatus, transferBox } from './stockLedger.js';
import { caseDemandPerDay, expiryFrom, servedWeight, totalWeight } from './tenantSetup.js';
import { hourMs, iso, laterAtWork, minuteMs, workingTime, type TenantContext } from './tenantContext.js';
import { addTo, boxesIn, isUsable, liveBoxes, stockKey, usableQuantity, type Box, type Item, type Member, type Warehouse } from './tenantWorld.js';

export type WarehouseActivity = {
  scheduleDay(dayStartMs: number): void;
  dispose(box: Box, reasonCode: string): void;
  /** Records a purchase arriving now at a central warehouse. */
  receivePurchase(central: Warehouse, lines: readonly PurchaseLine[], options?: { expiresAtMs?: number; disposalOverdue?: boolean }): void;
};

export type PurchaseLine = { readonly item: Item; readonly boxes: number };

/** Purchasing and receiving at central warehouses, expiry, cycle counts, quarantine and rebalancing. */
export function createWarehouseActivity(ctx: TenantContext): WarehouseActivity {
  const { world, rng } = ctx;

  const staffAt = (warehouseId: string): Member => {
    const clinic = world.clinics.find((c) => c.express.id === warehouseId);
    return clinic === undefined ? warehouseStaff(ctx, warehouseId) : clinicStaff(ctx, clinic.id);
  };
  const witnessFor = (box: Box, actorId: string): { secondActorId?: string } =>
    box.item.template.highValue ? { secondActorId: witness(ctx, actorId, world.clinics.find((c) => c.express.id === box.warehouseId)?.id) } : {};

  const dailyDemand = (central: Warehouse, item: Item): number => {
    const weight = servedWeight(ctx, central);
    return item.template.use === 'case' ? (caseDemandPerDay(ctx, item) * weight) / Math.max(0.01, totalWeight(ctx)) : item.dailyUse * weight;
  };

  const purchaseNumber = (): string => {
    const number = world.nextPurchaseNumber;
    world.nextPurchaseNumber += 1;
    return `PO-${iso(ctx.now()).slice(0, 4)}-${String(number).padStart(5, '0')}`;
  };

  const receivePurchase: WarehouseActivity['receivePurchase'] = (central, lines, options = {}) => {
    const po = purchaseNumber();
    const actorId = warehouseStaff(ctx, central.id).id;
    lines.forEach(({ item, boxes }, lineIndex) => {
      const lot = item.template.tracksLot ? newLot(ctx) : undefined;
      const shelfLife = item.template.shelfLifeDays;
      const expiresAtMs = options.expiresAtMs ?? (shelfLife === undefined ? undefined : expiryFrom(ctx, ctx.now(), shelfLife));
      for (let k = 0; k < boxes; k += 1) {
        registerBox(ctx, {
          item,
          warehouseId: central.id,
          quantity: item.caseQty,
          origin: { type: 'purchase', reference: po },
          ...(lot === undefined ? {} : { lot }),
          ...(expiresAtMs === undefined ? {} : { expiresAtMs }),
          ...(options.disposalOverdue === undefined ? {} : { disposalOverdue: options.disposalOverdue }),
          receipt: {
            actorId,
            ...(item.template.highValue ? { secondActorId: witness(ctx, actorId) } : {}),
            correlationId: po,
            idempotencyKey: `${po}:${lineIndex + 1}:${k + 1}`,
          },
        });
      }
    });
  };

  /**
   * Buys what will run short within ten days (keeping at least a full case) plus what orders are
   * waiting for, enough for about two more weeks.
   */
  const purchaseCheck = (central: Warehouse): void => {
    const lines: PurchaseLine[] = [];
    for (const item of world.items) {
      if (item.status !== 'active') continue;
      const demand = dailyDemand(central, item);
      const key = stockKey(central.id, item.id);
      const backorder = world.shortages.get(key) ?? 0;
      if (demand <= 0 && backorder === 0) continue;
      const level = usableQuantity(world, central.id, item.id, ctx.now(), allocationShelfMarginMs) + (world.inbound.get(key) ?? 0);
      const threshold = Math.max(demand * 10, item.caseQty);
      if (level - backorder >= threshold) continue;
      world.shortages.delete(key);
      const boxes = Math.max(1, Math.ceil((threshold + demand * 14 + backorder - level) / item.caseQty));
      lines.push({ item, boxes });
      addTo(world.inbound, key, boxes * item.caseQty);
    }
    if (lines.length === 0) return;
    ctx.at(laterAtWork(rng, ctx.now(), 24 * 60, 4 * 24 * 60), () => {
      for (const { item, boxes } of lines) addTo(world.inbound, stockKey(central.id, item.id), -boxes * item.caseQty);
      receivePurchase(central, lines);
    });
  };

  const dispose = (box: Box, reasonCode: string): void => {
    if (box.onHand === 0 || box.reserved > 0 || box.status === 'disposed' || box.status === 'depleted') return;
    const actorId = staffAt(box.warehouseId).id;
    recordMovement(ctx, box, { type: 'dispose', quantityDelta: -box.onHand, actorId, ...witnessFor(box, actorId), reasonCode });
    setBoxStatus(ctx, box, 'disposed', reasonCode);
  };

  const expiryCheck = (): void => {
    const now = ctx.now();
    world.expiryWatch = world.expiryWatch.filter((box) => box.onHand > 0 && (box.status === 'active' || box.status === 'quarantined' || box.status === 'expired'));
    for (const box of world.expiryWatch) {
      if (box.status !== 'active' || box.reserved > 0 || box.expiresAtMs === undefined || box.expiresAtMs > now) continue;
      setBoxStatus(ctx, box, 'expired', 'expiry_date_reached');
      if (!box.disposalOverdue) ctx.at(laterAtWork(rng, now, 24 * 60, 12 * 24 * 60), () => dispose(box, 'expired'));
    }
  };

  const cycleCount = (warehouse: Warehouse): void => {
    const candidates = boxesIn(world, warehouse.id).filter((box) => !box.item.template.tracksSerial);
    const count = Math.min(candidates.length, rng.int(1, 2) + Math.floor(ctx.intensity / 8));
    for (let i = 0; i < count; i += 1) {
      const box = candidates.splice(rng.int(0, candidates.length - 1), 1)[0];
      if (box === undefined || box.status !== 'active') continue;
      const delta = rng.pick([-2, -1, -1, 1, 1, 2]) * (box.item.template.unitOfMeasure === 'milliliter' ? rng.int(5, 50) : 1);
      if (box.onHand + delta < box.reserved) continue;
      const actorId = staffAt(warehouse.id).id;
      recordMovement(ctx, box, {
        type: 'adjust',
        quantityDelta: delta,
        actorId,
        ...witnessFor(box, actorId),
        reasonCode: delta < 0 ? rng.pick(['count_correction', 'damaged', 'missing']) : rng.pick(['count_correction', 'found']),
      });
    }
  };

  const quarantine = (): void => {
    const clinic = rng.pick(world.clinics.filter((c) => c.open));
    const candidates = boxesIn(world, clinic.express.id).filter((box) => box.item.tracksExpiry && box.reserved === 0 && isUsable(box, ctx.now()));
    if (candidates.length === 0) return;
    const box = rng.pick(candidates);
    setBoxStatus(ctx, box, 'quarantined', rng.pick(['temperature_excursion', 'packaging_damaged']));
    ctx.at(laterAtWork(rng, ctx.now(), 24 * 60, 3 * 24 * 60), () => {
      if (box.status !== 'quarantined') return;
      if (rng.chance(0.6)) setBoxStatus(ctx, box, 'active', 'released_after_inspection');
      else dispose(box, 'damaged');
    });
  };

  /** Moves whole boxes from a well-stocked central warehouse to one running short. */
  const rebalance = (): void => {
    let budget = 3 + Math.floor(ctx.intensity / 10);
    for (const item of world.items) {
      if (budget === 0) return;
      if (item.status !== 'active' || item.template.use !== 'daily') continue;
      for (const short of world.centrals) {
        const demand = dailyDemand(short, item);
        if (usableQuantity(world, short.id, item.id, ctx.now(), allocationShelfMarginMs) >= demand * 7) continue;
        for (const rich of world.centrals) {
          if (rich === short || budget === 0) continue;
          const spare = liveBoxes(world, rich.id, item.id).filter((box) => box.reserved === 0 && isUsable(box, ctx.now(), allocationShelfMarginMs));
          const box = spare[spare.length - 1];
          if (box === undefined) continue;
          const level = usableQuantity(world, rich.id, item.id, ctx.now(), allocationShelfMarginMs);
          if (level - box.onHand <= dailyDemand(rich, item) * 14) continue;
          const actorId = warehouseStaff(ctx, rich.id).id;
          transferBox(ctx, box, short.id, { actorId, reasonCode: 'rebalancing', ...witnessFor(box, actorId) });
          budget -= 1;
        }
      }
    }
  };

  return {
    dispose,
    receivePurchase,
    scheduleDay: (dayStartMs) => {
      const weekday = new Date(dayStartMs).getUTCDay();
      const workday = weekday >= 1 && weekday <= 5;
      ctx.at(dayStartMs + hourMs + Math.floor(rng.between(0, 30) * minuteMs), expiryCheck);
      if (workday) {
        for (const central of world.centrals) ctx.at(dayStartMs + 6 * hourMs + Math.floor(rng.between(0, 60) * minuteMs), () => purchaseCheck(central));
      }
      if (weekday === 5) {
        const warehouses = [...world.centrals, ...world.clinics.filter((c) => c.open).map((c) => c.express)];
        for (const warehouse of warehouses) ctx.at(workingTime(rng, dayStartMs, 15, 17), () => cycleCount(warehouse));
      }
      if (weekday === 3 && world.centrals.length > 1) ctx.at(dayStartMs + 10 * hourMs, rebalance);
      if (rng.chance(Math.min(0.5, 0.08 * Math.sqrt(Math.max(1, ctx.intensity))))) ctx.at(workingTime(rng, dayStartMs), quarantine);
    },
  };
}
