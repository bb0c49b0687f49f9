import type { StreamWrite } from '../../eventStore/eventStore.js';
import { createClinicActivity } from './clinicActivity.js';
import { createEventSink } from './eventSink.js';
import { resolveHistoryParams, tenantEventBudget, type HistoryParams } from './historyParams.js';
import { createIdFactory } from './idFactory.js';
import { scheduleOrganisationChanges } from './organisationChanges.js';
import { createPrng, hashSeed } from './prng.js';
import { createScheduler } from './scheduler.js';
import { scheduleShowcase } from './showcase.js';
import { createTenantContext, dayMs, minuteMs } from './tenantContext.js';
import { planTenant } from './tenantPlan.js';
import { scheduleSetup } from './tenantSetup.js';
import { createWarehouseActivity } from './warehouseActivity.js';

/**
 * The history of `tenants` dental organisations over the `days` before `asOf`, as stream writes in
 * chronological order, produced lazily (a large history never sits in memory). A pure function of
 * its parameters: the same parameters give byte-identical events, ids and timestamps.
 */
export function* generateHistory(params: HistoryParams): Generator<StreamWrite, void, undefined> {
  const resolved = resolveHistoryParams(params);
  const scheduler = createScheduler(resolved.startMs, resolved.asOfMs);
  const sink = createEventSink();
  const budget = tenantEventBudget(resolved.scale, resolved.tenants);
  const nameOffset = hashSeed(resolved.seed, 'organisation-names');

  for (let index = 0; index < resolved.tenants; index += 1) {
    // Each tenant draws from its own generator, so one tenant's history does not shift another's.
    const rng = createPrng(hashSeed(resolved.seed, `tenant:${index}`));
    const ids = createIdFactory(rng);
    const plan = planTenant(rng, ids, { scale: resolved.scale, tenantIndex: index, nameOffset, budget, days: resolved.days });
    const ctx = createTenantContext({
      tenantId: plan.workspaceId,
      rng,
      ids,
      world: plan.world,
      scheduler,
      sink,
      intensity: plan.intensity,
      startMs: resolved.startMs,
    });
    const clinics = createClinicActivity(ctx);
    const warehouses = createWarehouseActivity(ctx);
    scheduleSetup(ctx, plan, index * 7 * minuteMs);
    scheduleOrganisationChanges(ctx, warehouses);
    scheduleShowcase(ctx, warehouses);
    // Each day's work is planned at its midnight, so the queue only ever holds about a day of tasks.
    const planDay = (dayStartMs: number): void => {
      for (const clinic of plan.world.clinics) clinics.scheduleDay(clinic, dayStartMs);
      warehouses.scheduleDay(dayStartMs);
      scheduler.at(dayStartMs + dayMs, () => planDay(dayStartMs + dayMs));
    };
    scheduler.at(resolved.startMs + dayMs, () => planDay(resolved.startMs + dayMs));
  }

  while (scheduler.runNext()) {
    yield* sink.drain();
  }
}
