import type { EventData, EventType } from '../../events/index.js';
import type { EventSink } from './eventSink.js';
import type { IdFactory } from './idFactory.js';
import type { Prng } from './prng.js';
import type { Scheduler, Task } from './scheduler.js';
import type { TenantWorld } from './tenantWorld.js';
import { createIsoFormatter } from './isoFormatter.js';

export const minuteMs = 60_000;
export const hourMs = 3_600_000;
export const dayMs = 86_400_000;

/** Everything the simulation of one tenant needs: its randomness, its clock, its state and where events go. */
export type TenantContext = {
  readonly tenantId: string;
  readonly rng: Prng;
  readonly ids: IdFactory;
  readonly world: TenantWorld;
  readonly startMs: number;
  readonly endMs: number;
  /** Activity multiplier derived from the event budget of the scale. */
  readonly intensity: number;
  /** From this time on, orders are evaluated under approval policy version 2. */
  readonly policyChangeMs: number;
  now(): number;
  /** `now()` as an ISO timestamp. */
  isoNow(): string;
  at(timeMs: number, task: Task): void;
  emit<T extends EventType>(streamName: string, type: T, data: EventData<T>): void;
};

export function createTenantContext(options: {
  tenantId: string;
  rng: Prng;
  ids: IdFactory;
  world: TenantWorld;
  scheduler: Scheduler;
  sink: EventSink;
  intensity: number;
  startMs: number;
}): TenantContext {
  const { tenantId, rng, ids, world, scheduler, sink, intensity, startMs } = options;
  const format = createIsoFormatter();
  return {
    tenantId,
    rng,
    ids,
    world,
    startMs,
    endMs: scheduler.endMs,
    intensity,
    policyChangeMs: startMs + Math.floor(((scheduler.endMs - startMs) * 0.45) / dayMs) * dayMs,
    now: scheduler.now,
    isoNow: () => format(scheduler.now()),
    at: scheduler.at,
    emit: (streamName, type, data) => {
      sink.emit({ streamName, type, data, tenantId, eventId: ids.uuid(), atMs: scheduler.now() });
    },
  };
}

export const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const iso = (ms: number): string => new Date(ms).toISOString();

export const dayStartOf = (ms: number): number => Math.floor(ms / dayMs) * dayMs;

/** A random moment of working hours on the day starting at `dayStartMs`. */
export function workingTime(rng: Prng, dayStartMs: number, fromHour = 8, toHour = 18): number {
  return dayStartMs + Math.floor(rng.between(fromHour, toHour) * hourMs);
}

/**
 * `fromMs` plus a random delay of `minMinutes`..`maxMinutes`, moved to the next morning when it
 * would fall outside working hours (people and warehouses work 07:00–19:00 UTC here).
 */
export function laterAtWork(rng: Prng, fromMs: number, minMinutes: number, maxMinutes: number): number {
  const due = fromMs + Math.floor(rng.between(minMinutes, maxMinutes) * minuteMs);
  const hour = (due - dayStartOf(due)) / hourMs;
  if (hour >= 7 && hour < 19) return due;
  const morning = dayStartOf(due) + (hour >= 19 ? dayMs : 0) + 7 * hourMs;
  return morning + Math.floor(rng.between(10, 120) * minuteMs);
}
