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

  it.each(['small', 'medium'] as const)(
    'gives each %s workspace two active members holding integrations.manage (the owner and an admin) and an active member without orders.approve',
    async (scale) => {
      const store = createMemoryEventStore();
      const summary = await seed({ eventStore: store, params: { ...params, tenants: 3, scale } });
      for (const tenant of summary.tenants) {
        // members lists everyone who joined, in joining order, beside memberIds.
        expect(tenant.members.map((m) => m.memberId)).toEqual(tenant.memberIds);
        const active = tenant.members.filter((m) => m.status === 'active');
        const managers = active.filter((m) => m.permissions.includes('integrations.manage'));
        expect(managers.length).toBeGreaterThanOrEqual(2);
        const roles = await Promise.all(
          managers.map(async (m) => (await store.readStream(`supply.member-${tenant.workspaceId}.${m.memberId}`))[0]?.data),
        );
        expect(roles.map((data) => (data as { role?: string } | undefined)?.role).slice(0, 2)).toEqual(['owner', 'admin']);
        expect(active.some((m) => !m.permissions.includes('orders.approve'))).toBe(true);
        // Statuses are those the member streams end with.
        for (const member of tenant.members) {
          const events = await store.readStream(`supply.member-${tenant.workspaceId}.${member.memberId}`);
          const last = events.findLast((e) => e.type !== 'MemberJoined')?.type;
          const expected = events.some((e) => e.type === 'MemberRemoved') ? 'removed' : last === 'MemberSuspended' ? 'suspended' : 'active';
          expect(member.status).toBe(expected);
          expect(member.permissions).toEqual((events[0]?.data as { permissions: string[] }).permissions);
        }
        expect(tenant.members.some((m) => m.status === 'suspended')).toBe(true);
        expect(tenant.members.some((m) => m.status === 'removed')).toBe(true);
      }
    },
    60_000,
  );

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
