import { describe, expect, test } from 'vitest';
import { logStart, type EventStore, type LogPosition, type RecordedEvent } from '../eventStore/eventStore.js';
import { type EventEnvelope } from '../events/index.js';
import { createAnalyticsFoldState, foldEvent } from '../analytics/fold/analyticsFold.js';
import { createFoldComputer } from '../analytics/fold/foldComputer.js';
import { foldTenantLog } from './foldTenantLog.js';
import { tenant, ev, t, draft, clinic } from '../../test/support/analyticsFoldEvents.js';

// ── Folding the log ──
function arrayEventStore(events: readonly { event: EventEnvelope; position: LogPosition }[], reads: { count: number }): EventStore {
  const recorded: RecordedEvent[] = events.map(({ event, position }, index) => ({
    position,
    streamName: `supply.test-${event.tenantId}`,
    streamRevision: BigInt(index),
    eventId: event.eventId,
    type: event.type,
    schemaVersion: event.schemaVersion,
    tenantId: event.tenantId,
    occurredAt: event.occurredAt,
    recordedAt: event.occurredAt,
    data: JSON.parse(JSON.stringify(event.data)) as unknown,
  }));
  const unsupported = (): never => {
    throw new Error('not in this test store');
  };
  const after = (a: LogPosition, b: LogPosition) => a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq);
  return {
    kind: 'postgres',
    readAll: async (from, maxCount) => {
      reads.count += 1;
      const rest = recorded.filter((event) => after(event.position, from));
      const page = rest.slice(0, maxCount);
      return { events: page, next: page.at(-1)?.position ?? from, atHead: rest.length <= maxCount };
    },
    append: unsupported,
    appendMany: unsupported,
    readStream: unsupported,
    subscribe: unsupported,
    head: unsupported,
    streamNames: unsupported,
    close: async () => undefined,
  };
}

describe('foldTenantLog', () => {
  const logged = (events: readonly EventEnvelope[]) => events.map((event, index) => ({ event, position: { tx: BigInt(10 + Math.floor(index / 2)), seq: BigInt(index + 1) } }));
  const unknownType = { ...ev('ClinicOpened', { clinicId: 'cli_x', name: 'X', status: 'active' }, t(1)), type: 'SomethingNew' } as unknown as EventEnvelope;
  const events = [
    clinic('cli_1', 'One', t(1)),
    clinic('cli_other', 'Other tenant', t(1), 'ten_2'),
    unknownType,
    draft('ord_1', 1, 'cli_1', t(2)),
    clinic('cli_2', 'Two', t(3), 'ten_2'),
    clinic('cli_3', 'Three', t(4)),
    draft('ord_2', 2, 'cli_1', t(5)),
  ];
  const log = logged(events);

  test('folds only the tenant events up to and including upTo, page by page, skipping unknown types', async () => {
    const reads = { count: 0 };
    const store = arrayEventStore(log, reads);
    const upTo = log[5]?.position ?? logStart;
    const progress: number[] = [];
    const state = await foldTenantLog(store, tenant, upTo, { pageSize: 2, onProgress: (n) => progress.push(n) });
    expect(progress).toEqual([2, 4, 6, 6]);
    expect(state.eventCount).toBe(3);
    expect(await createFoldComputer(state, tenant).comparison({ cap: 10 })).toEqual({
      truncated: false,
      clinics: [
        { clinicId: 'cli_1', clinicName: 'One', clinicStatus: 'active', totalOrders: 1, pendingApprovalOrders: 0 },
        { clinicId: 'cli_3', clinicName: 'Three', clinicStatus: 'active', totalOrders: 0, pendingApprovalOrders: 0 },
      ],
    });
    // Pages of 2: [0,1] [2,3] [4,5] [6 — past upTo].
    expect(reads.count).toBe(4);

    const other = await foldTenantLog(store, 'ten_2', { tx: 1000n, seq: 0n });
    expect(await createFoldComputer(other, 'ten_2').comparison({ cap: 10 })).toMatchObject({
      clinics: [{ clinicId: 'cli_2' }, { clinicId: 'cli_other' }],
    });
  });

  test('stops at the head and folds nothing before logStart', async () => {
    const reads = { count: 0 };
    const store = arrayEventStore(log, reads);
    const all = await foldTenantLog(store, tenant, { tx: 1000n, seq: 0n }, { pageSize: 100 });
    expect(all.eventCount).toBe(4);
    expect(reads.count).toBe(1);
    expect((await foldTenantLog(store, tenant, logStart)).eventCount).toBe(0);
    expect((await foldTenantLog(arrayEventStore([], reads), tenant, { tx: 1000n, seq: 0n })).eventCount).toBe(0);
  });

  test('a state is one tenant: another tenant event or computer is refused', () => {
    const state = createAnalyticsFoldState(tenant);
    expect(() => foldEvent(state, clinic('cli_1', 'X', t(1), 'ten_2'))).toThrow(/tenant/);
    expect(() => createFoldComputer(state, 'ten_2')).toThrow(/tenant/);
  });
});
