import { describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../test/support/memoryEventStore.js';
import { ConsoleError } from './consoleError.js';
import { generateHistory } from './history/generateHistory.js';
import type { HistoryParams } from './history/historyParams.js';
import { seed, type SeedProgress } from './seed.js';

const params: HistoryParams = { seed: 'seed-test', tenants: 2, days: 30, scale: 'small', asOf: '2025-11-22T00:00:00.000Z' };

describe('seed', () => {
  it('appends the whole history in order, in transactions of about batchSize events', async () => {
    const store = createMemoryEventStore();
    const reports: SeedProgress[] = [];
    await seed({ eventStore: store, params, batchSize: 100, progress: (progress) => reports.push(progress) });

    const generated = [...generateHistory(params)].flatMap((write) => write.events.map((event) => ({ stream: write.streamName, eventId: event.eventId })));
    const written = store.transactions.flatMap((writes) => writes.flatMap((write) => write.events.map((event) => ({ stream: write.streamName, eventId: event.eventId }))));
    expect(written).toEqual(generated);
    const sizes = store.transactions.map((writes) => writes.reduce((sum, write) => sum + write.events.length, 0));
    expect(sizes.slice(0, -1).every((size) => size >= 100 && size < 200)).toBe(true);
    expect(reports[reports.length - 1]).toEqual({ written: generated.length, total: generated.length });
    expect(reports.every((report, i) => i === 0 || report.written >= (reports[i - 1]?.written ?? 0))).toBe(true);
  });

  it('summarises each tenant with all its ids, the owner first', async () => {
    const store = createMemoryEventStore();
    const summary = await seed({ eventStore: store, params });
    expect(summary.tenants).toHaveLength(2);
    for (const tenant of summary.tenants) {
      expect(tenant.workspaceId).toMatch(/^ws_/);
      const [ownerStream] = await store.readStream(`supply.member-${tenant.workspaceId}.${tenant.memberIds[0] ?? ''}`);
      expect(ownerStream?.data).toMatchObject({ role: 'owner' });
      expect(tenant.clinicIds.length).toBeGreaterThanOrEqual(3);
      expect(tenant.clinicIds.length).toBeLessThanOrEqual(6);
      expect(tenant.warehouseIds.length).toBeGreaterThan(tenant.clinicIds.length);
      expect(tenant.orderIds.length).toBeGreaterThan(20);
      expect(tenant.boxIds.length).toBeGreaterThan(100);
      expect(tenant.itemIds.length).toBeGreaterThan(40);
    }
  });

  it('refuses a store that already holds the first workspace of this seed', async () => {
    const store = createMemoryEventStore();
    const summary = await seed({ eventStore: store, params });
    const workspaceId = summary.tenants[0]?.workspaceId ?? '';
    const transactions = store.transactions.length;
    const again = seed({ eventStore: store, params });
    await expect(again).rejects.toThrow(ConsoleError);
    await expect(seed({ eventStore: store, params })).rejects.toThrow(`workspace ${workspaceId} is already seeded; use another --seed or an empty store`);
    expect(store.transactions.length).toBe(transactions);
  });
});
