import { categoryTemplates, itemTemplates, type CategoryKey, type ItemTemplate } from './dentalCatalog.js';
import type { HistoryScale } from './historyParams.js';
import type { IdFactory } from './idFactory.js';
import { asciiSlug, cities, cityDistricts, firstNames, lastNames, organisationNames } from './names.js';
import type { Prng } from './prng.js';
import { createTenantWorld, type Clinic, type Item, type Member, type MemberRole, type TenantWorld, type Warehouse } from './tenantWorld.js';

/** The organisation of one tenant, decided before any of its events: ids, names, sizes, catalogue. */
export type TenantPlan = {
  readonly workspaceId: string;
  readonly name: string;
  readonly world: TenantWorld;
  readonly categories: readonly { readonly id: string; readonly key: CategoryKey; readonly name: string; readonly parentId?: string }[];
  /** Members who join later in the history (new hires), with the fraction of the history when. */
  readonly laterMembers: readonly { readonly member: Member; readonly at: number }[];
  /** A clinic that opens later in the history, with the fraction of the history when. */
  readonly laterClinic: { readonly clinic: Clinic; readonly at: number } | undefined;
  readonly intensity: number;
};

const permissionsByRole: Record<MemberRole, readonly string[]> = {
  owner: [
    'integrations.manage',
    'members.manage',
    'orders.create',
    'orders.approve',
    'orders.approve_high_value',
    'clinical.approve',
    'inventory.manage',
    'catalog.manage',
    'reports.view',
  ],
  admin: ['members.manage', 'orders.create', 'orders.approve', 'inventory.manage', 'catalog.manage', 'reports.view'],
  purchasing: ['orders.create', 'catalog.manage', 'reports.view'],
  clinician: ['orders.create', 'inventory.consume'],
  warehouse: ['inventory.manage', 'inventory.count', 'orders.fulfil'],
  viewer: ['reports.view'],
};

const variantsByScale: Record<HistoryScale, number> = { small: 1, medium: 3, large: 6 };

export type TenantPlanInput = {
  readonly scale: HistoryScale;
  readonly tenantIndex: number;
  /** Rotates the organisation names by seed, so that tenants of one history never share a name. */
  readonly nameOffset: number;
  readonly budget: number;
  readonly days: number;
};

export function planTenant(rng: Prng, ids: IdFactory, input: TenantPlanInput): TenantPlan {
  const { scale, tenantIndex, nameOffset, budget, days } = input;
  const workspaceId = ids.id('ws');
  const organisation = organisationNames[(nameOffset + tenantIndex) % organisationNames.length] ?? {
    name: 'Dental Group',
    domain: 'dentalgroup',
    brand: 'Dental',
  };
  const city = rng.pick(cities);
  const suffix = tenantIndex >= organisationNames.length ? ` ${tenantIndex + 1}` : '';
  const world = createTenantWorld(
    rng.chance(0.6) ? 'EUR' : 'USD',
    `${organisation.domain}${tenantIndex >= organisationNames.length ? tenantIndex + 1 : ''}`,
    Array.from({ length: rng.int(3, 5) }, () => ids.id('crr')),
  );

  const clinicCount = rng.int(3, 6);
  const centralCount = clinicCount >= 5 || rng.chance(0.35) ? 2 : 1;
  const sides = ['North', 'South'];
  for (let i = 0; i < centralCount; i += 1) {
    world.centrals.push({ id: ids.id('wh'), name: `Central warehouse ${city} ${sides[i] ?? String(i + 1)}`, kind: 'central' });
  }
  const districts = [...cityDistricts];
  for (let i = 0; i < clinicCount; i += 1) {
    const district = districts.splice(rng.int(0, districts.length - 1), 1)[0] ?? `Site ${i + 1}`;
    const id = ids.id('cli');
    const name = `${organisation.brand} ${city} ${district}`;
    const express: Warehouse = { id: ids.id('wh'), name: `${name} express store`, kind: 'express', clinicId: id };
    const central = world.centrals[i % world.centrals.length];
    if (central === undefined) throw new Error('a tenant has a central warehouse');
    world.clinics.push({ id, name, size: Number(rng.between(0.6, 1.6).toFixed(2)), surgery: i === 0 || rng.chance(0.45), express, central, open: false });
  }
  const laterClinic = clinicCount >= 4 && days >= 20 ? { clinic: lastOf(world.clinics), at: rng.between(0.15, 0.3) } : undefined;

  const usedNames = new Set<string>();
  const newMember = (role: MemberRole, clinicIds: readonly string[], extra: { permissions?: readonly string[]; warehouseId?: string } = {}): Member => {
    let first = rng.pick(firstNames);
    let last = rng.pick(lastNames);
    while (usedNames.has(`${first} ${last}`)) {
      first = rng.pick(firstNames);
      last = rng.pick(lastNames);
    }
    usedNames.add(`${first} ${last}`);
    return {
      id: ids.id('mem'),
      name: `${first} ${last}`,
      role,
      permissions: [...permissionsByRole[role], ...(extra.permissions ?? [])],
      clinicIds,
      ...(extra.warehouseId === undefined ? {} : { warehouseId: extra.warehouseId }),
      active: false,
    };
  };
  const allClinics = world.clinics.map((c) => c.id);
  world.members.push(newMember('owner', allClinics));
  // The owner and this admin both hold integrations.manage, so that keys of two people can be told
  // apart; neither is ever suspended or removed by the history.
  world.members.push(newMember('admin', allClinics, { permissions: ['orders.approve_high_value', 'integrations.manage'] }));
  if (clinicCount >= 4) world.members.push(newMember('admin', allClinics));
  const purchasingCount = scale === 'small' ? 2 : 3;
  for (let i = 0; i < purchasingCount; i += 1) {
    world.members.push(newMember('purchasing', allClinics, i === 0 ? { permissions: ['orders.approve'] } : {}));
  }
  for (const central of world.centrals) {
    const staff = rng.int(2, scale === 'small' ? 3 : 4);
    for (let i = 0; i < staff; i += 1) world.members.push(newMember('warehouse', [], { warehouseId: central.id }));
  }
  const laterMembers: { member: Member; at: number }[] = [];
  for (const clinic of world.clinics) {
    const clinicians = rng.int(2, scale === 'small' ? 3 : 5);
    for (let i = 0; i < clinicians; i += 1) {
      world.members.push(newMember('clinician', [clinic.id], i === 0 ? { permissions: ['clinical.approve'] } : {}));
    }
    world.members.push(newMember('warehouse', [clinic.id]));
  }
  world.members.push(newMember('viewer', allClinics));
  const hireClinic = rng.pick(world.clinics.slice(0, 3));
  laterMembers.push({ member: newMember('clinician', [hireClinic.id]), at: rng.between(0.4, 0.6) });

  const categories: { id: string; key: CategoryKey; name: string; parentId?: string }[] = [];
  for (const template of categoryTemplates) {
    const parentId = template.parent === undefined ? undefined : categories.find((c) => c.key === template.parent)?.id;
    categories.push({ id: ids.id('cat'), key: template.key, name: template.name, ...(parentId === undefined ? {} : { parentId }) });
  }

  const clinicWeight = world.clinics.reduce((sum, c) => sum + c.size, 0);
  const intensity = intensityFor(budget, days, clinicWeight, world.clinics.length + world.centrals.length);
  for (const template of itemTemplates) {
    const categoryId = categories.find((c) => c.key === template.category)?.id;
    if (categoryId === undefined) throw new Error(`category ${template.category} is missing`);
    world.items.push(...itemsOf(template, categoryId, variantsByScale[scale], intensity, world.currency, ids));
  }

  return {
    workspaceId,
    name: `${organisation.name}${suffix}`,
    world,
    categories,
    laterMembers,
    laterClinic,
    intensity,
  };
}

function lastOf<T>(items: readonly T[]): T {
  const last = items[items.length - 1];
  if (last === undefined) throw new Error('empty list');
  return last;
}

/** The catalogue items of one template: one per variant in use, sharing its usage (the first variant most). */
function itemsOf(template: ItemTemplate, categoryId: string, maxVariants: number, intensity: number, currency: 'EUR' | 'USD', ids: IdFactory): Item[] {
  const variants = template.variants === undefined ? [undefined] : template.variants.slice(0, maxVariants);
  const weights = variants.map((_, i) => 1 / (i + 1));
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const [minUse, maxUse] = template.qtyPerUse;
  const perUse = (minUse + maxUse) / 2;
  return variants.map((variant, i) => {
    const share = (weights[i] ?? 0) / totalWeight;
    const usesPerDay = template.usesPerDay * share;
    const dailyUse = usesPerDay * perUse * intensity;
    const minimum = template.unitOfMeasure === 'milliliter' ? maxUse * 2 : 2;
    return {
      id: ids.id('itm'),
      sku: variant === undefined ? template.sku : `${template.sku}-${asciiSlug(variant).toUpperCase().replace(/^(SIZE|SHADE)/, '')}`,
      name: variant === undefined ? template.name : `${template.name}, ${variant}`,
      categoryId,
      template,
      tracksExpiry: template.shelfLifeDays !== undefined,
      status: template.status ?? 'active',
      reorderPoint: template.use === 'case' || template.status !== undefined ? 0 : Math.max(minimum, Math.ceil(dailyUse * 6)),
      usesPerDay,
      dailyUse,
      caseQty: template.caseQty * bulkFactor(intensity),
      unitCost:
        template.cost === undefined
          ? undefined
          : Math.max(1, Math.round((template.cost.amount * (currency === 'USD' ? 1.08 : 1)) / template.cost.per)),
    };
  });
}

/** Larger organisations buy in larger cases (pallets), so receipts do not grow box by box. */
export function bulkFactor(intensity: number): number {
  return intensity <= 2 ? 1 : Math.round(intensity ** 0.6);
}

/**
 * The activity multiplier that makes a tenant produce about `budget` events over `days`. The model
 * was fitted (least squares on relative error) on generated histories of every scale and of 30 to
 * 365 days: set-up events per warehouse, then events per clinic-size-day growing with intensity
 * (use, linearly; orders and receipts, sub-linearly; stock handling of very busy clinics, faster).
 */
export function intensityFor(budget: number, days: number, clinicWeight: number, warehouses: number): number {
  const fixed = 365 + 30 * warehouses;
  const perDay = (budget - fixed) / days / clinicWeight;
  const model = (a: number): number => 5.47 * a + 16.4 * Math.sqrt(a) - 1.13 + 0.006 * a * a;
  let low = 0.02;
  let high = 5_000;
  for (let i = 0; i < 60; i += 1) {
    const mid = (low + high) / 2;
    if (model(mid) < perDay) low = mid;
    else high = mid;
  }
  return Number(low.toFixed(4));
}

