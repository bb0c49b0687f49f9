import type { TenantContext } from './tenantContext.js';
import { rosterOf, type Member } from './tenantWorld.js';

/** Who does what: actors are drawn from the members active at the time, the owner as last resort. */
function owner(ctx: TenantContext): Member {
  const found = ctx.world.members.find((m) => m.role === 'owner');
  if (found === undefined) throw new Error('a tenant has an owner');
  return found;
}

function pickOr(ctx: TenantContext, candidates: readonly Member[], fallback: () => Member): Member {
  return candidates.length > 0 ? ctx.rng.pick(candidates) : fallback();
}

export function warehouseStaff(ctx: TenantContext, warehouseId: string): Member {
  const here = rosterOf(ctx.world, 'warehouse', warehouseId, (m) => m.role === 'warehouse' && m.warehouseId === warehouseId);
  const anywhere = rosterOf(ctx.world, 'warehouse', '', (m) => m.role === 'warehouse');
  return pickOr(ctx, here.length > 0 ? here : anywhere, () => owner(ctx));
}

export function clinicStaff(ctx: TenantContext, clinicId: string): Member {
  const here = rosterOf(ctx.world, 'staff', clinicId, (m) => (m.role === 'clinician' || m.role === 'warehouse') && m.clinicIds.includes(clinicId));
  return pickOr(ctx, here, () => purchaser(ctx));
}

export function clinician(ctx: TenantContext, clinicId: string): Member {
  const here = rosterOf(ctx.world, 'clinician', clinicId, (m) => m.role === 'clinician' && m.clinicIds.includes(clinicId));
  return pickOr(ctx, here, () => clinicStaff(ctx, clinicId));
}

export function purchaser(ctx: TenantContext): Member {
  return pickOr(ctx, rosterOf(ctx.world, 'purchasing', '', (m) => m.role === 'purchasing'), () => owner(ctx));
}

/** Members allowed to approve a step, never the requester (segregation of duties). */
export function approvers(ctx: TenantContext, permission: string, requesterId: string): Member[] {
  const allowed = rosterOf(ctx.world, 'permission', permission, (m) => m.permissions.includes(permission)).filter((m) => m.id !== requesterId);
  return allowed.length > 0 ? allowed : [owner(ctx)];
}

/** The second person who signs off a high-value movement. */
export function witness(ctx: TenantContext, actorId: string, clinicId?: string): string {
  const pool = (
    clinicId === undefined
      ? rosterOf(ctx.world, 'witness', '', (m) => m.role === 'warehouse' || m.role === 'purchasing')
      : rosterOf(ctx.world, 'members', clinicId, (m) => m.clinicIds.includes(clinicId))
  ).filter((m) => m.id !== actorId);
  if (pool.length > 0) return ctx.rng.pick(pool).id;
  const anyone = ctx.world.members.filter((m) => m.active && m.id !== actorId);
  return anyone.length > 0 ? ctx.rng.pick(anyone).id : owner(ctx).id;
}

export function courier(ctx: TenantContext): string {
  return ctx.rng.pick(ctx.world.couriers);
}
