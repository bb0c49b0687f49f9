import { clinician, purchaser, clinicStaff, witness } from './actors.js';
import { draftOrder } from './orderLifecycle.js';
import { randomFate } from './orderFates.js';
import { recordMovement, takeSerials, transferBox } from './stockLedger.js';
import { casesPerClinicDay } from './tenantSetup.js';
import { dayMs, isoDay, laterAtWork, minuteMs, workingTime, type TenantContext } from './tenantContext.js';
import { available, isUsable, liveBoxes, stockKey, usableQuantity, type Box, type Clinic, type Item } from './tenantWorld.js';

export type ClinicActivity = { scheduleDay(clinic: Clinic, dayStartMs: number): void };

/** Days of use a replenishment order tops a clinic up to; busier organisations order more often. */
export function coverDays(intensity: number): number {
  return Math.min(14, Math.max(3, 14 / intensity ** 0.35));
}

/** Purchasing reorders for a clinic below the item's reorder point, or below six days of its own use if busier. */
export function reorderLevel(clinic: Clinic, item: Item): number {
  return Math.max(item.reorderPoint, Math.ceil(item.dailyUse * clinic.size * 6));
}

/** What a replenishment tops up to: the reorder level plus some days of use, and never a token quantity. */
export function parLevel(ctx: TenantContext, clinic: Clinic, item: Item): number {
  const minimumOrder = item.template.unitOfMeasure === 'milliliter' ? item.template.qtyPerUse[1] * 3 : 3;
  return reorderLevel(clinic, item) + Math.max(minimumOrder, Math.ceil(item.dailyUse * clinic.size * coverDays(ctx.intensity)));
}

/** Weekdays (0 = Sunday) purchasing reviews a clinic's shelves: more often in busier organisations. */
export function replenishmentDays(intensity: number): readonly number[] {
  return intensity < 0.8 ? [1, 4] : intensity < 3 ? [1, 3, 5] : [1, 2, 3, 4, 5];
}

/** Chair-side use, surgical cases and replenishment orders of the clinics. */
export function createClinicActivity(ctx: TenantContext): ClinicActivity {
  const { world, rng } = ctx;
  const dailyItems = world.items.filter((item) => item.template.use === 'daily' && item.usesPerDay > 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const item of dailyItems) {
    sum += item.usesPerDay;
    cumulative.push(sum);
  }
  const usesPerClinicDay = sum;
  const reviewDays = replenishmentDays(ctx.intensity);

  const pickItem = (): Item | undefined => {
    const target = rng.float() * usesPerClinicDay;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((cumulative[mid] ?? 0) <= target) low = mid + 1;
      else high = mid;
    }
    return dailyItems[low];
  };

  const firstUsable = (warehouseId: string, itemId: string): Box | undefined =>
    liveBoxes(world, warehouseId, itemId).find((box) => isUsable(box, ctx.now()));

  const consume = (clinic: Clinic): void => {
    if (!clinic.open) return;
    const item = pickItem();
    if (item === undefined) return;
    const box = firstUsable(clinic.express.id, item.id) ?? stockOut(clinic, item);
    if (box === undefined) return;
    const [low, high] = item.template.qtyPerUse;
    const quantity = Math.min(rng.int(low, high), available(box));
    const actorId = clinician(ctx, clinic.id).id;
    const appointment = rng.chance(0.4) ? ctx.ids.id('apt') : undefined;
    recordMovement(ctx, box, {
      type: 'consume',
      quantityDelta: -quantity,
      actorId,
      ...(item.template.highValue ? { secondActorId: witness(ctx, actorId, clinic.id) } : {}),
      ...(appointment === undefined ? {} : { correlationId: appointment }),
      // Tablets that were offline sync their entries later.
      ...(rng.chance(0.05) ? { occurredAtMs: ctx.now() - Math.floor(rng.between(10, 240) * minuteMs) } : {}),
    });
    if (rng.chance(0.025)) {
      const back = Math.max(1, Math.floor(quantity / 3));
      ctx.at(ctx.now() + Math.floor(rng.between(20, 90) * minuteMs), () => {
        if (box.status !== 'active') return;
        recordMovement(ctx, box, {
          type: 'return',
          quantityDelta: back,
          actorId,
          reasonCode: 'unused',
          ...(appointment === undefined ? {} : { correlationId: appointment }),
        });
      });
    }
  };

  /** Nothing left on the shelf: borrow a box from a sister clinic, or order urgently. */
  const stockOut = (clinic: Clinic, item: Item): Box | undefined => {
    if (item.status !== 'active') return undefined;
    if (rng.chance(0.3)) {
      for (const other of world.clinics) {
        if (other === clinic || !other.open) continue;
        const spare = liveBoxes(world, other.express.id, item.id).filter((box) => isUsable(box, ctx.now()) && box.reserved === 0);
        const box = spare[spare.length - 1];
        if (spare.length >= 2 && box !== undefined) {
          const actorId = clinicStaff(ctx, other.id).id;
          transferBox(ctx, box, clinic.express.id, {
            actorId,
            reasonCode: 'stock_out_cover',
            ...(item.template.highValue ? { secondActorId: witness(ctx, actorId, other.id) } : {}),
          });
          return box;
        }
      }
    }
    if ((world.onOrder.get(stockKey(clinic.express.id, item.id)) ?? 0) === 0 && rng.chance(0.4)) {
      const level = usableQuantity(world, clinic.express.id, item.id, ctx.now());
      draftOrder(ctx, {
        type: 'general',
        clinic,
        requesterId: clinician(ctx, clinic.id).id,
        lines: [{ item, quantity: Math.max(1, parLevel(ctx, clinic, item) - level) }],
        justification: `Stock-out of ${item.name} at ${clinic.name}`,
        fate: randomFate(rng, 'general'),
      });
    }
    return undefined;
  };

  const replenish = (clinic: Clinic): void => {
    if (!clinic.open) return;
    const lines: { item: Item; quantity: number }[] = [];
    for (const item of dailyItems) {
      if (item.status !== 'active') continue;
      const level = usableQuantity(world, clinic.express.id, item.id, ctx.now()) + (world.onOrder.get(stockKey(clinic.express.id, item.id)) ?? 0);
      if (level < reorderLevel(clinic, item)) lines.push({ item, quantity: parLevel(ctx, clinic, item) - level });
    }
    for (let i = 0; i < lines.length; i += 10) {
      const byPurchasing = rng.chance(0.7);
      draftOrder(ctx, {
        type: 'general',
        clinic,
        requesterId: byPurchasing ? purchaser(ctx).id : clinician(ctx, clinic.id).id,
        lines: lines.slice(i, i + 10),
        ...(rng.chance(0.1) ? { justification: 'Weekly replenishment' } : {}),
        ...(rng.chance(0.2) ? { preferredSource: rng.pick(world.centrals) } : {}),
        fate: randomFate(rng, 'general'),
      });
    }
  };

  const planCase = (clinic: Clinic): void => {
    if (!clinic.open) return;
    const implants = world.items.filter((item) => item.template.key === 'implant' && item.status === 'active');
    const abutments = world.items.filter((item) => item.template.key === 'healingAbutment' && item.status === 'active');
    const graft = world.items.find((item) => item.template.key === 'boneGraft');
    const membrane = world.items.find((item) => item.template.key === 'membrane');
    if (implants.length === 0 || abutments.length === 0) return;
    const count = rng.chance(0.75) ? 1 : 2;
    const withGraft = graft !== undefined && rng.chance(0.3);
    const lines = [
      { item: rng.pick(implants), quantity: count },
      { item: rng.pick(abutments), quantity: count },
      ...(withGraft ? [{ item: graft, quantity: 1 }] : []),
      ...(withGraft && membrane !== undefined && rng.chance(0.5) ? [{ item: membrane, quantity: 1 }] : []),
    ];
    const caseId = ctx.ids.id('cas');
    const surgeryDay = isoDay(ctx.now() + rng.int(5, 14) * dayMs);
    draftOrder(ctx, {
      type: 'clinical',
      clinic,
      requesterId: clinician(ctx, clinic.id).id,
      lines,
      patientRef: `PT-${ctx.ids.chars(6, '0123456789')}`,
      justification: `Implant placement, tooth ${rng.pick(['14', '16', '24', '26', '36', '37', '46', '47'])}; surgery planned for ${surgeryDay}`,
      fate: randomFate(rng, 'case'),
      onReceived: (boxes) => reserveForSurgery(clinic, boxes, caseId),
    });
  };

  const reserveForSurgery = (clinic: Clinic, boxes: readonly Box[], caseId: string): void => {
    ctx.at(laterAtWork(rng, ctx.now(), 10, 90), () => {
      const actorId = clinician(ctx, clinic.id).id;
      const reserved: Box[] = [];
      for (const box of boxes) {
        if (box.status !== 'active' || available(box) === 0) continue;
        recordMovement(ctx, box, {
          type: 'reserve',
          quantityDelta: 0,
          reservedDelta: available(box),
          actorId,
          ...(box.item.template.highValue ? { secondActorId: witness(ctx, actorId, clinic.id) } : {}),
          correlationId: caseId,
          idempotencyKey: `${caseId}:reserve:${box.id}`,
        });
        reserved.push(box);
      }
      ctx.at(laterAtWork(rng, ctx.now(), 24 * 60, 6 * 24 * 60), () => operate(clinic, reserved, caseId));
    });
  };

  /** Surgery day: the reserved items are used, or released when the case is postponed. */
  const operate = (clinic: Clinic, boxes: readonly Box[], caseId: string): void => {
    const surgeon = clinician(ctx, clinic.id).id;
    const roll = rng.float();
    for (const box of boxes) {
      if (box.reserved === 0) continue;
      const used = roll < 0.08 ? 0 : roll < 0.15 && box.reserved >= 2 ? 1 : box.reserved;
      const highValue = box.item.template.highValue ? { secondActorId: witness(ctx, surgeon, clinic.id) } : {};
      if (used > 0) {
        takeSerials(box, used);
        recordMovement(ctx, box, { type: 'consume', quantityDelta: -used, reservedDelta: -used, actorId: surgeon, ...highValue, correlationId: caseId });
      }
      const rest = box.reserved;
      if (rest > 0) {
        recordMovement(ctx, box, { type: 'release', quantityDelta: 0, reservedDelta: -rest, actorId: surgeon, ...highValue, correlationId: caseId, reasonCode: used === 0 ? 'case_postponed' : 'not_used' });
      }
    }
  };

  return {
    scheduleDay: (clinic, dayStartMs) => {
      if (!clinic.open) return;
      const weekday = new Date(dayStartMs).getUTCDay();
      const workday = weekday >= 1 && weekday <= 5;
      const factor = weekday === 0 ? 0.15 : weekday === 6 ? 0.5 : 1;
      const uses = rng.count(usesPerClinicDay * ctx.intensity * clinic.size * factor);
      for (let i = 0; i < uses; i += 1) ctx.at(workingTime(rng, dayStartMs, 8, 19), () => consume(clinic));
      if (clinic.surgery && workday) {
        const cases = rng.count(casesPerClinicDay * ctx.intensity * clinic.size);
        for (let i = 0; i < cases; i += 1) ctx.at(workingTime(rng, dayStartMs, 9, 17), () => planCase(clinic));
      }
      if (reviewDays.includes(weekday)) ctx.at(workingTime(rng, dayStartMs, 9, 11), () => replenish(clinic));
    },
  };
}
