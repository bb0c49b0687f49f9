import { streams } from '../../events/index.js';
import { clinicStaff, warehouseStaff, witness } from './actors.js';
import { asciiSlug } from './names.js';
import { newLot, registerBox } from './stockLedger.js';
import { dayMs, hourMs, minuteMs, type TenantContext } from './tenantContext.js';
import type { TenantPlan } from './tenantPlan.js';
import { setMemberActive, type Clinic, type Item, type Member, type Warehouse } from './tenantWorld.js';

/** Day one: the workspace, its people, places and catalogue, and the opening stock count. */
export function scheduleSetup(ctx: TenantContext, plan: TenantPlan, offsetMs: number): void {
  const { world } = ctx;
  const day0 = ctx.startMs + offsetMs;
  const emails = new Set<string>();
  ctx.at(day0 + 8 * hourMs, () => {
    ctx.emit(streams.workspace(ctx.tenantId), 'WorkspaceCreated', { workspaceId: plan.workspaceId, name: plan.name });
  });
  const initialClinics = world.clinics.filter((c) => c !== plan.laterClinic?.clinic);
  const lateClinicId = plan.laterClinic?.clinic.id;
  const founders = world.members.filter((m) => lateClinicId === undefined || m.role === 'owner' || !m.clinicIds.includes(lateClinicId) || m.clinicIds.length > 1);
  founders.forEach((member, i) => ctx.at(day0 + 8 * hourMs + (5 + i * 3) * minuteMs, () => join(ctx, member, emails)));
  world.centrals.forEach((central, i) => ctx.at(day0 + 9 * hourMs + i * minuteMs, () => openWarehouse(ctx, central)));
  initialClinics.forEach((clinic, i) => ctx.at(day0 + 9 * hourMs + (5 + i * 4) * minuteMs, () => openClinic(ctx, clinic)));

  ctx.at(day0 + 10 * hourMs, () => {
    for (const category of plan.categories) {
      ctx.emit(streams.category(ctx.tenantId, category.id), 'CatalogCategoryDefined', {
        categoryId: category.id,
        name: category.name,
        ...(category.parentId === undefined ? {} : { parentCategoryId: category.parentId }),
      });
    }
  });
  world.items.forEach((item, i) => ctx.at(day0 + 10 * hourMs + (10 + i) * minuteMs, () => defineItem(ctx, item)));
  ctx.at(day0 + 14 * hourMs, () => {
    for (const central of world.centrals) openingStock(ctx, central, servedWeight(ctx, central));
  });
  initialClinics.forEach((clinic, i) => ctx.at(day0 + 15 * hourMs + i * 20 * minuteMs, () => openingStock(ctx, clinic.express, clinic.size, clinic)));

  const later = plan.laterClinic;
  if (later !== undefined) {
    const openAt = ctx.startMs + Math.floor((ctx.endMs - ctx.startMs) * later.at / dayMs) * dayMs + 9 * hourMs;
    ctx.at(openAt, () => openClinic(ctx, later.clinic));
    world.members
      .filter((m) => m.role !== 'owner' && m.clinicIds.length === 1 && m.clinicIds[0] === later.clinic.id)
      .forEach((member, i) => ctx.at(openAt + (10 + i * 5) * minuteMs, () => join(ctx, member, emails)));
    ctx.at(openAt + 3 * hourMs, () => openingStock(ctx, later.clinic.express, later.clinic.size, later.clinic));
  }
  for (const { member, at } of plan.laterMembers) {
    const joinAt = ctx.startMs + Math.floor((ctx.endMs - ctx.startMs) * at / dayMs) * dayMs + 9 * hourMs + 30 * minuteMs;
    ctx.at(joinAt, () => {
      world.members.push(member);
      join(ctx, member, emails);
    });
  }
}

function join(ctx: TenantContext, member: Member, emails: Set<string>): void {
  const [first = 'member', ...rest] = member.name.split(' ');
  const base = `${asciiSlug(first)}.${asciiSlug(rest.join(' '))}`;
  let email = `${base}@${ctx.world.domain}.example`;
  for (let n = 2; emails.has(email); n += 1) email = `${base}${n}@${ctx.world.domain}.example`;
  emails.add(email);
  ctx.emit(streams.member(ctx.tenantId, member.id), 'MemberJoined', {
    memberId: member.id,
    name: member.name,
    email,
    role: member.role,
    permissions: [...member.permissions],
    clinicIds: [...member.clinicIds],
  });
  setMemberActive(ctx.world, member, true);
}

function openWarehouse(ctx: TenantContext, warehouse: Warehouse): void {
  ctx.emit(streams.warehouse(ctx.tenantId, warehouse.id), 'WarehouseOpened', {
    warehouseId: warehouse.id,
    name: warehouse.name,
    kind: warehouse.kind,
    ...(warehouse.clinicId === undefined ? {} : { clinicId: warehouse.clinicId }),
    status: 'active',
  });
}

function openClinic(ctx: TenantContext, clinic: Clinic): void {
  ctx.emit(streams.clinic(ctx.tenantId, clinic.id), 'ClinicOpened', { clinicId: clinic.id, name: clinic.name, status: 'active' });
  openWarehouse(ctx, clinic.express);
  clinic.open = true;
}

function defineItem(ctx: TenantContext, item: Item): void {
  const { template } = item;
  ctx.emit(streams.item(ctx.tenantId, item.id), 'CatalogItemDefined', {
    itemId: item.id,
    sku: item.sku,
    name: item.name,
    categoryId: item.categoryId,
    unitOfMeasure: template.unitOfMeasure,
    packaging: template.packaging,
    criticality: template.criticality,
    tracksLot: template.tracksLot,
    tracksSerial: template.tracksSerial,
    tracksExpiry: item.tracksExpiry,
    highValue: template.highValue,
    reorderPoint: item.reorderPoint,
    status: item.status,
  });
  const cost = template.cost;
  ctx.emit(
    streams.item(ctx.tenantId, item.id),
    'CatalogItemCostRecorded',
    cost === undefined
      ? { itemId: item.id, costStatus: 'missing' }
      : {
          itemId: item.id,
          costStatus: cost.status,
          cost: Math.round(cost.amount * (ctx.world.currency === 'USD' ? 1.08 : 1)),
          currency: ctx.world.currency,
          costMeasurement: { quantity: cost.per, unitOfMeasure: template.unitOfMeasure },
        },
  );
}

/** Sum of the sizes of the clinics a central warehouse normally serves. */
export function servedWeight(ctx: TenantContext, central: Warehouse): number {
  return ctx.world.clinics.filter((c) => c.central.id === central.id).reduce((sum, c) => sum + c.size, 0);
}

/** Stock found at the opening count: a few weeks' worth at a central warehouse, a par level at a clinic. */
function openingStock(ctx: TenantContext, warehouse: Warehouse, weight: number, clinic?: Clinic): void {
  const actorId = clinic === undefined ? warehouseStaff(ctx, warehouse.id).id : clinicStaff(ctx, clinic.id).id;
  for (const item of ctx.world.items) {
    const isCase = item.template.use === 'case';
    if (item.status === 'inactive' || (clinic !== undefined && isCase)) continue;
    const days = clinic === undefined ? ctx.rng.between(18, 30) : ctx.rng.between(6, 14);
    const demand = isCase ? caseDemandPerDay(ctx, item) * (weight / Math.max(1, totalWeight(ctx))) : item.dailyUse * weight;
    const wanted = item.status === 'discontinued' ? (clinic === undefined ? item.caseQty * 2 : 0) : Math.ceil(demand * days + item.reorderPoint);
    if (wanted <= 0) continue;
    const perBox = clinic === undefined ? item.caseQty : Math.max(1, Math.ceil(wanted / ctx.rng.int(1, 2)));
    const boxCount = Math.max(1, Math.ceil(wanted / perBox));
    const lot = item.template.tracksLot ? newLot(ctx) : undefined;
    for (let i = 0; i < boxCount; i += 1) {
      const shelfLife = item.template.shelfLifeDays;
      registerBox(ctx, {
        item,
        warehouseId: warehouse.id,
        quantity: perBox,
        origin: { type: 'count', reference: 'Opening stock count' },
        ...(lot === undefined ? {} : { lot }),
        ...(shelfLife === undefined ? {} : { expiresAtMs: expiryFrom(ctx, ctx.now(), shelfLife) }),
        receipt: { actorId, reasonCode: 'opening_balance', ...(item.template.highValue ? { secondActorId: witness(ctx, actorId, clinic?.id) } : {}) },
      });
    }
  }
}

/** A UTC day start some way into the shelf life: most stock is fresh, a little is short-dated. */
export function expiryFrom(ctx: TenantContext, fromMs: number, shelfLifeDays: number): number {
  const remainingDays = ctx.rng.chance(0.07) ? ctx.rng.between(35, 80) : shelfLifeDays * ctx.rng.between(0.35, 0.95);
  return Math.floor((fromMs + remainingDays * dayMs) / dayMs) * dayMs;
}

export function totalWeight(ctx: TenantContext): number {
  return ctx.world.clinics.reduce((sum, c) => sum + c.size, 0);
}

/** Surgical cases per clinic-day at size 1 and intensity 1. */
export const casesPerClinicDay = 0.12;

/** Units of a case item used per day across the organisation. */
export function caseDemandPerDay(ctx: TenantContext, item: Item): number {
  const surgeryWeight = ctx.world.clinics.filter((c) => c.surgery).reduce((sum, c) => sum + c.size, 0);
  const siblings = ctx.world.items.filter((i) => i.template === item.template).length;
  const [low, high] = item.template.qtyPerUse;
  const perCase = ((low + high) / 2) * (item.template.key === 'boneGraft' ? 0.3 : item.template.key === 'membrane' ? 0.2 : 1);
  return (casesPerClinicDay * ctx.intensity * surgeryWeight * perCase) / siblings;
}
