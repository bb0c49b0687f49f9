import { describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/eventually.js';
import { logStart, type LogPosition, type ReadAllResult, type RecordedEvent } from './eventStore.js';
import { pollingSubscription } from './pollingSubscription.js';
import { createWakeHub } from './wakeHub.js';

function recorded(seq: number): RecordedEvent {
  return {
    position: { tx: 1n, seq: BigInt(seq) },
    streamName: 'supply.workspace-t1',
    streamRevision: BigInt(seq - 1),
    eventId: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    type: 'WorkspaceCreated',
    schemaVersion: 1,
    tenantId: 't1',
    occurredAt: '2025-01-01T00:00:00.000Z',
    recordedAt: '2025-01-01T00:00:00.000Z',
    data: {},
  };
}

/** A log in memory: `visible` events can be read; reads count so tests can see polling. */
function memoryLog() {
  const log = { visible: [] as RecordedEvent[], pending: false, reads: 0 };
  const readBatch = async (from: LogPosition, maxCount: number): Promise<ReadAllResult> => {
    log.reads += 1;
    const after = log.visible.filter((event) => event.position.seq > from.seq);
    const events = after.slice(0, maxCount);
    return { events, next: events.at(-1)?.position ?? from, atHead: after.length <= maxCount };
  };
  return { log, readBatch, hasPendingEvents: async () => log.pending };
}


describe('wake hub', () => {
  it('given a wake-up while the subscriber was busy, then its next wait returns at once', async () => {
    const hub = createWakeHub();
    const waker = hub.waker();
    hub.wakeAll();

    // "At once": the wait has resolved before the next turn of the event loop, not after its hour.
    const waited = waker.wait(3_600_000).then(() => 'woken');
    const nextTurn = new Promise((resolve) => setImmediate(() => resolve('still waiting')));

    expect(await Promise.race([waited, nextTurn])).toBe('woken');
    waker.close();
    expect(hub.size).toBe(0);
  });

  it('given a wait, then an abort ends it at once', async () => {
    const waker = createWakeHub().waker();
    const controller = new AbortController();
    const waiting = waker.wait(10_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});

describe('polling subscription', () => {
  it('given a backlog, then it catches up in batches, then a wake-up delivers a new event without waiting for the poll', async () => {
    const { log, readBatch, hasPendingEvents } = memoryLog();
    log.visible.push(recorded(1), recorded(2), recorded(3));
    const hub = createWakeHub();
    const controller = new AbortController();
    const batches: number[][] = [];
    const consuming = (async () => {
      const subscription = pollingSubscription({
        from: logStart,
        batchSize: 2,
        signal: controller.signal,
        readBatch,
        hasPendingEvents,
        waker: () => hub.waker(),
        pollIntervalMs: 60_000,
      });
      for await (const batch of subscription) batches.push(batch.map((event) => Number(event.position.seq)));
    })();
    await eventually(() => expect(batches.flat()).toHaveLength(3));

    log.visible.push(recorded(4));
    hub.wakeAll();
    await eventually(() => expect(batches.flat()).toHaveLength(4));
    controller.abort();
    await consuming;

    expect(batches).toEqual([[1, 2], [3], [4]]);
  });

  it('given events pending behind an older transaction, then it keeps polling quickly until they show', async () => {
    const { log, readBatch, hasPendingEvents } = memoryLog();
    log.pending = true;
    const controller = new AbortController();
    const seen: number[] = [];
    const consuming = (async () => {
      const subscription = pollingSubscription({
        from: logStart,
        batchSize: 10,
        signal: controller.signal,
        readBatch,
        hasPendingEvents,
        waker: () => createWakeHub().waker(),
        pollIntervalMs: 60_000,
        pendingRetryMs: 5,
      });
      for await (const batch of subscription) seen.push(...batch.map((event) => Number(event.position.seq)));
    })();
    // The poll is a minute apart: three reads while the event is pending are the quick retries.
    await eventually(() => expect(log.reads).toBeGreaterThan(2));
    const readsWhilePending = log.reads;

    log.visible.push(recorded(1));
    log.pending = false;
    await eventually(() => expect(seen).toHaveLength(1));
    controller.abort();
    await consuming;

    expect(readsWhilePending).toBeGreaterThan(2);
    expect(seen).toEqual([1]);
  });

  it('given events pending for long (an old transaction elsewhere in the cluster), then the retry delay stops growing at its bound', async () => {
    const { log, readBatch, hasPendingEvents } = memoryLog();
    log.pending = true;
    const controller = new AbortController();
    const waits: number[] = [];
    const subscription = pollingSubscription({
      from: logStart,
      batchSize: 10,
      signal: controller.signal,
      readBatch,
      hasPendingEvents,
      // Records each delay asked for and returns at once: twenty rounds of backoff in no time.
      waker: () => ({
        wait: async (ms: number) => {
          waits.push(ms);
          if (waits.length === 20) {
            log.visible.push(recorded(1));
            log.pending = false;
          }
        },
        close: () => {},
      }),
      pollIntervalMs: 60_000,
      pendingRetryMs: 20,
    });
    const first = await subscription.next();
    controller.abort();
    await subscription.return(undefined);

    expect(first.value?.map((event) => Number(event.position.seq))).toEqual([1]);
    expect(waits.slice(0, 4)).toEqual([20, 40, 80, 160]);
    expect(Math.max(...waits)).toBe(1000);
  });
});
