import { streams } from '../../events/index.js';
import type { WarehouseActivity } from './warehouseActivity.js';
import { dayMs, workingTime, type TenantContext } from './tenantContext.js';
import { liveBoxes, setMemberActive, type Member } from './tenantWorld.js';

/**
 * What changes in an organisation over a quarter besides daily work: people go on leave, leave the
 * company or come back; prices, reorder points and names change; an item is discontinued.
 */
export function scheduleOrganisationChanges(ctx: TenantContext, warehouses: WarehouseActivity): void {
  const { world, rng } = ctx;
  const span = ctx.endMs - ctx.startMs;
  const dayAt = (fraction: number): number => ctx.startMs + Math.max(1, Math.floor((span * fraction) / dayMs)) * dayMs;
  const at = (fraction: number, task: () => void): void => ctx.at(workingTime(rng, dayAt(fraction), 9, 17), task);

  // A clinician whose clinic keeps another active clinician: the clinic keeps working.
  const replaceableClinician = (): Member | undefined =>
    world.members.find(
      (m) =>
        m.active &&
        m.role === 'clinician' &&
        world.members.some((other) => other !== m && other.active && other.role === 'clinician' && other.clinicIds.some((id) => m.clinicIds.includes(id))),
    );

  at(0.2, () => {
    const member = replaceableClinician();
    if (member === undefined) return;
    ctx.emit(streams.member(ctx.tenantId, member.id), 'MemberSuspended', { memberId: member.id, reason: 'Pending credential renewal' });
    setMemberActive(world, member, false);
    at(0.3, () => {
      ctx.emit(streams.member(ctx.tenantId, member.id), 'MemberReactivated', { memberId: member.id });
      setMemberActive(world, member, true);
    });
  });
  at(0.35, () => {
    const candidates = world.members.filter((m) => m.active && m.role === 'clinician');
    const member = candidates[candidates.length - 1];
    if (member === undefined || candidates.length < 2) return;
    ctx.emit(streams.member(ctx.tenantId, member.id), 'MemberSuspended', { memberId: member.id, reason: 'Leave of absence' });
    setMemberActive(world, member, false);
  });
  at(0.6, () => {
    const member = world.members.find(
      (m) => m.active && m.role === 'warehouse' && m.warehouseId !== undefined && world.members.some((o) => o !== m && o.active && o.warehouseId === m.warehouseId),
    );
    if (member === undefined) return;
    ctx.emit(streams.member(ctx.tenantId, member.id), 'MemberRemoved', { memberId: member.id });
    setMemberActive(world, member, false);
  });

  at(0.3, () => {
    const surgery = world.items.find((item) => item.template.category === 'surgery')?.categoryId;
    if (surgery !== undefined) ctx.emit(streams.category(ctx.tenantId, surgery), 'CatalogCategoryRenamed', { categoryId: surgery, name: 'Oral surgery and periodontics' });
  });
  at(0.3, () => {
    for (const item of world.items.filter((i) => i.status === 'discontinued')) {
      for (const central of world.centrals) {
        for (const box of [...liveBoxes(world, central.id, item.id)]) warehouses.dispose(box, 'discontinued');
      }
    }
  });
  at(0.4, () => {
    const item = world.items.find((i) => i.template.key === 'articaine');
    if (item === undefined) return;
    item.reorderPoint = Math.ceil(item.reorderPoint * 1.25) + 1;
    ctx.emit(streams.item(ctx.tenantId, item.id), 'CatalogItemRevised', {
      itemId: item.id,
      reorderPoint: item.reorderPoint,
      packaging: 'Box of 50 cartridges (blister packed)',
    });
  });
  at(0.5, () => {
    for (const item of world.items) {
      const cost = item.template.cost;
      if (cost === undefined || item.status !== 'active' || !rng.chance(0.2)) continue;
      const factor = rng.between(1.03, 1.09);
      const amount = Math.round(cost.amount * (world.currency === 'USD' ? 1.08 : 1) * factor);
      item.unitCost = Math.max(1, Math.round(amount / cost.per));
      ctx.emit(streams.item(ctx.tenantId, item.id), 'CatalogItemCostRecorded', {
        itemId: item.id,
        costStatus: 'confirmed',
        cost: amount,
        currency: world.currency,
        costMeasurement: { quantity: cost.per, unitOfMeasure: item.template.unitOfMeasure },
      });
    }
  });
  at(0.55, () => {
    const item = world.items.find((i) => i.template.key === 'polishers' && i.status === 'active');
    if (item === undefined) return;
    item.status = 'discontinued';
    ctx.emit(streams.item(ctx.tenantId, item.id), 'CatalogItemStatusChanged', { itemId: item.id, status: 'discontinued' });
  });
  at(0.65, () => {
    const clinic = world.clinics.find((c) => c.open);
    if (clinic === undefined) return;
    clinic.name = `${clinic.name} Dental Centre`;
    ctx.emit(streams.clinic(ctx.tenantId, clinic.id), 'ClinicRenamed', { clinicId: clinic.id, name: clinic.name });
  });
}
