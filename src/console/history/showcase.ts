import type { OrderStatus } from '../../events/index.js';
import { clinician, purchaser } from './actors.js';
import { draftOrder } from './orderLifecycle.js';
import { allocationShelfMarginMs } from './orderSteps.js';
import type { OrderFate } from './simOrder.js';
import { registerBox } from './stockLedger.js';
import { dayMs, hourMs, minuteMs, type TenantContext } from './tenantContext.js';
import { usableQuantity, type Clinic, type Item } from './tenantWorld.js';
import type { WarehouseActivity } from './warehouseActivity.js';

/**
 * Situations that a demo and the tests must find at asOf whatever the dice said: an order waiting in
 * every open status, approvals pending for hours up to weeks, expired stock nobody disposed of yet,
 * and stock that expires within the month.
 */
export function scheduleShowcase(ctx: TenantContext, warehouses: WarehouseActivity): void {
  const { world } = ctx;
  const endDay = ctx.endMs;
  const spanDays = Math.round((ctx.endMs - ctx.startMs) / dayMs);
  const notBeforeSetup = (ms: number): number => Math.max(ms, ctx.startMs + dayMs + 10 * hourMs);
  const expiring = world.items.filter((item) => item.tracksExpiry && item.template.use === 'daily' && item.status === 'active' && item.usesPerDay > 0);
  const central = world.centrals[0];
  const lastCentral = world.centrals[world.centrals.length - 1];

  if (central !== undefined && lastCentral !== undefined && expiring.length >= 4 && spanDays >= 4) {
    const [expiredAtCentral, expiredAtClinic, soon, later] = [expiring[0], expiring[1], expiring[2], expiring[3]];
    ctx.at(notBeforeSetup(endDay - 25 * dayMs + 10 * hourMs), () => {
      if (expiredAtCentral !== undefined) warehouses.receivePurchase(central, [{ item: expiredAtCentral, boxes: 1 }], { expiresAtMs: endDay - 3 * dayMs, disposalOverdue: true });
    });
    ctx.at(notBeforeSetup(endDay - 10 * dayMs + 11 * hourMs), () => {
      const clinic = world.clinics.find((c) => c.open);
      if (clinic === undefined || expiredAtClinic === undefined) return;
      registerBox(ctx, {
        item: expiredAtClinic,
        warehouseId: clinic.express.id,
        quantity: Math.max(4, expiredAtClinic.reorderPoint * 3),
        origin: { type: 'purchase', reference: 'Direct delivery (supplier promotion)' },
        expiresAtMs: endDay - 2 * dayMs,
        disposalOverdue: true,
        receipt: { actorId: clinician(ctx, clinic.id).id },
      });
    });
    ctx.at(notBeforeSetup(endDay - 6 * dayMs + 10 * hourMs), () => {
      if (soon !== undefined) warehouses.receivePurchase(lastCentral, [{ item: soon, boxes: 1 }], { expiresAtMs: endDay + 9 * dayMs });
      if (later !== undefined) warehouses.receivePurchase(lastCentral, [{ item: later, boxes: 1 }], { expiresAtMs: endDay + 24 * dayMs });
    });
  }

  const openStatuses: readonly OrderStatus[] = ['approved', 'allocated', 'picking', 'dispatched', 'delivered', 'exception', 'received', 'partially_fulfilled'];
  const examples: { readonly hoursBefore: number; readonly fate: Partial<OrderFate>; readonly clinical: boolean }[] = [
    { hoursBefore: 5, fate: { stopAt: 'draft' }, clinical: false },
    { hoursBefore: 20, fate: { stopAt: 'submitted' }, clinical: false },
    ...openStatuses.map((status, i) => ({
      hoursBefore: 40 - i * 0.4,
      clinical: false,
      fate: {
        stopAt: status,
        ...(status === 'exception' ? { exception: { reasonCode: 'delayed', resolution: 'unresolved' } as const } : {}),
        ...(status === 'partially_fulfilled' ? { discrepancy: 'short' } as const : {}),
      },
    })),
    ...[4, 20, 60, 120, 192, 264].map((hours) => ({ hoursBefore: hours + 1, fate: { stopAt: 'pending_approval' } as const, clinical: true })),
    { hoursBefore: 30, fate: { rejectAtStage: 0 }, clinical: true },
    { hoursBefore: 30, fate: { cancelAfter: 'allocated' } as const, clinical: false },
  ];
  examples.forEach((example, i) => {
    const createdAt = ctx.endMs - Math.round(example.hoursBefore * hourMs) - i * minuteMs;
    if (createdAt < ctx.startMs + dayMs + 12 * hourMs) return;
    ctx.at(createdAt, () => {
      const open = world.clinics.filter((c) => c.open && (!example.clinical || c.surgery));
      const clinic = open[i % Math.max(1, open.length)];
      if (clinic === undefined) return;
      const lines = example.clinical ? caseLines(ctx) : stockedLines(ctx, clinic);
      if (lines.length === 0) return;
      draftOrder(ctx, {
        type: example.clinical ? 'clinical' : 'general',
        clinic,
        requesterId: example.clinical ? clinician(ctx, clinic.id).id : purchaser(ctx).id,
        lines,
        ...(example.clinical ? { patientRef: `PT-${ctx.ids.chars(6, '0123456789')}`, justification: 'Implant placement; surgery to be scheduled' } : {}),
        fate: { abandon: false, slowApproval: false, fast: true, ...example.fate },
      });
    });
  });
}

/** One to three items the clinic's central warehouse can ship right away, in small quantities. */
function stockedLines(ctx: TenantContext, clinic: Clinic): { item: Item; quantity: number }[] {
  const candidates = ctx.world.items.filter(
    (item) =>
      item.status === 'active' &&
      item.template.use === 'daily' &&
      usableQuantity(ctx.world, clinic.central.id, item.id, ctx.now(), allocationShelfMarginMs) >= smallQuantity(item) * 3,
  );
  const lines: { item: Item; quantity: number }[] = [];
  const count = Math.min(candidates.length, ctx.rng.int(1, 3));
  for (let i = 0; i < count; i += 1) {
    const item = candidates.splice(ctx.rng.int(0, candidates.length - 1), 1)[0];
    if (item !== undefined) lines.push({ item, quantity: smallQuantity(item) });
  }
  return lines;
}

function smallQuantity(item: Item): number {
  return item.template.unitOfMeasure === 'milliliter' ? item.template.qtyPerUse[1] * 2 : 2;
}

function caseLines(ctx: TenantContext): { item: Item; quantity: number }[] {
  const implant = ctx.world.items.find((item) => item.template.key === 'implant' && item.status === 'active');
  const abutment = ctx.world.items.find((item) => item.template.key === 'healingAbutment' && item.status === 'active');
  return implant === undefined || abutment === undefined ? [] : [{ item: implant, quantity: 1 }, { item: abutment, quantity: 1 }];
}
