import { randomUUID } from 'node:crypto';
import { expect, vi } from 'vitest';
import { newEvent, streams } from '../events/index.js';
import { compareLogPositions, type EventStore, type LogPosition, type RecordedEvent } from './eventStore.js';

/** Events and waits of the event store contract (eventStoreContract.ts). */

export const occurredAt = '2025-03-04T05:06:07.089Z';
export const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function clinicOpened(tenantId: string, clinicId: string = randomUUID(), name = 'Zahnklinik Süd – Ø 2') {
  return newEvent('ClinicOpened', { clinicId, name, status: 'active' }, { eventId: randomUUID(), tenantId, occurredAt });
}

export function clinicRenamed(tenantId: string, clinicId: string, name: string) {
  return newEvent('ClinicRenamed', { clinicId, name }, { eventId: randomUUID(), tenantId, occurredAt });
}

export function workspaceCreated(tenantId: string) {
  return newEvent('WorkspaceCreated', { workspaceId: tenantId, name: `Praxis "${tenantId}"` }, { eventId: randomUUID(), tenantId, occurredAt });
}

export function workspaceSuspended(tenantId: string) {
  return newEvent('WorkspaceSuspended', { workspaceId: tenantId }, { eventId: randomUUID(), tenantId, occurredAt });
}

export function itemStatusChanged(tenantId: string, itemId: string) {
  return newEvent('CatalogItemStatusChanged', { itemId, status: 'inactive' }, { eventId: randomUUID(), tenantId, occurredAt });
}

export function ids(events: readonly RecordedEvent[]): string[] {
  return events.map((event) => event.eventId);
}

/**
 * Waits until `check` answers true. The timeout bounds only a failure: on a shared Postgres the
 * log's horizon may be held back by other sessions' transactions for a while.
 */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`condition not met within ${timeoutMs} ms`);
    },
    { timeout: timeoutMs, interval: 10 },
  );
}

/**
 * Waits until the log is visible through `position`. A reader may lag a committed append while an
 * older transaction is still running: on Postgres any transaction of the cluster holds the horizon
 * back for a moment (other test files run beside this one).
 */
export async function visibleThrough(store: EventStore, position: LogPosition): Promise<void> {
  await eventually(async () => compareLogPositions((await store.head()).position, position) >= 0);
}

/** A start position after every earlier event: the position of a marker appended now, once visible. */
export async function freshStart(store: EventStore): Promise<LogPosition> {
  const tenant = randomUUID();
  const marker = await store.append(streams.workspace(tenant), [workspaceCreated(tenant)], 'no_stream');
  await visibleThrough(store, marker.position);
  return marker.position;
}

export function expectStrictlyIncreasing(positions: readonly LogPosition[]): void {
  positions.slice(1).forEach((position, index) => {
    const previous = positions[index];
    expect(previous && compareLogPositions(previous, position)).toBe(-1);
  });
}

/** Runs a subscription in the background, collecting its batches. */
export function collect(store: EventStore, from: LogPosition, batchSize?: number) {
  const controller = new AbortController();
  const batches: RecordedEvent[][] = [];
  const done = (async () => {
    for await (const batch of store.subscribe({ from, batchSize, signal: controller.signal })) {
      batches.push([...batch]);
    }
  })();
  return {
    batches,
    events: () => batches.flat(),
    done,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}
