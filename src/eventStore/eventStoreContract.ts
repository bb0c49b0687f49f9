import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEvent, streams, type EventEnvelope } from '../events/index.js';
import { compareLogPositions, logStart, WrongExpectedRevisionError, type EventStore, type RecordedEvent, type StreamWrite } from './eventStore.js';
import { occurredAt, isoMs, clinicOpened, clinicRenamed, workspaceCreated, workspaceSuspended, itemStatusChanged, ids, eventually, visibleThrough, freshStart, expectStrictlyIncreasing, collect } from './eventStoreContractHelpers.js';

/** An append transaction kept open until commit(): how the late-commit race is staged. */
export type HeldAppend = { commit(): Promise<void> };

export type EventStoreContractSubject = {
  readonly store: EventStore;
  /** appendMany is one transaction (Postgres), or applied stream by stream (EventStoreDB). */
  readonly atomicAppendMany: boolean;
  /** True where one append transaction waits for another (PGlite: one backend). */
  readonly serialisesWriters: boolean;
  /** Appends in a transaction that stays open until commit(); absent where writers cannot overlap. */
  readonly holdAppend?: (writes: readonly StreamWrite[]) => Promise<HeldAppend>;
  close(): Promise<void>;
};


/**
 * The behaviour every EventStore adapter promises. Each test works on streams of its own tenant
 * and reads the log relative to the head it found, so the suite can share one store.
 */
export function describeEventStoreContract(name: string, factory: () => Promise<EventStoreContractSubject>): void {
  describe(name, () => {
    let subject: EventStoreContractSubject;
    let store: EventStore;

    beforeAll(async () => {
      subject = await factory();
      store = subject.store;
    });
    afterAll(async () => {
      await subject?.close();
    });
    const freshTenant = () => randomUUID();

    describe('append and readStream', () => {
      it('given a new stream, when events are appended, then readStream returns them with every field and the data preserved', async () => {
        const tenant = freshTenant();
        const clinicId = randomUUID();
        const stream = streams.clinic(tenant, clinicId);
        const opened = clinicOpened(tenant, clinicId);
        const renamed = clinicRenamed(tenant, clinicId, 'Zähne & Co. "Nord" 🦷');

        const result = await store.append(stream, [opened, renamed], 'no_stream');
        const read = await store.readStream(stream);

        const expected = [opened, renamed].map((event, revision) => ({
          position: expect.any(Object),
          streamName: stream,
          streamRevision: BigInt(revision),
          eventId: event.eventId,
          type: event.type,
          schemaVersion: 1,
          tenantId: tenant,
          occurredAt,
          recordedAt: expect.stringMatching(isoMs),
          data: event.data,
        }));
        expect(read).toEqual(expected);
        expect(result).toEqual({ nextExpectedRevision: 1n, position: read[1]?.position });
        expect(read.map((event) => decodeEvent(event))).toEqual([opened, renamed]);
        expectStrictlyIncreasing(read.map((event) => event.position));
      });

      it('given no such stream, when it is read, then it has no events', async () => {
        expect(await store.readStream(streams.clinic(freshTenant(), 'nowhere'))).toEqual([]);
      });

      it('given an event type this code does not know, when it is appended, then it is stored and read back, and decodeEvent skips it', async () => {
        const tenant = freshTenant();
        const stream = streams.workspace(tenant);
        // What a newer console might write: the type is unknown to this catalogue.
        const future = {
          eventId: randomUUID(),
          tenantId: tenant,
          occurredAt,
          schemaVersion: 1,
          type: 'SterilisationCycleLogged',
          data: { cycleId: 'cy-1', minutes: 42 },
        } as unknown as EventEnvelope;
        const start = await freshStart(store);

        const appended = await store.append(stream, [workspaceCreated(tenant), future], 'no_stream');

        const [, stored] = await store.readStream(stream);
        expect(stored).toMatchObject({ type: 'SterilisationCycleLogged', data: { cycleId: 'cy-1', minutes: 42 }, streamRevision: 1n });
        expect(stored && decodeEvent(stored)).toBeUndefined();
        await visibleThrough(store, appended.position);
        const fromLog = await store.readAll(start, 10);
        expect(fromLog.events.map((event) => event.type)).toEqual(['WorkspaceCreated', 'SterilisationCycleLogged']);
      });
    });

    describe('expected revision', () => {
      const expectConflict = async (append: Promise<unknown>, expected: WrongExpectedRevisionError['expected'], actual: bigint | 'no_stream') => {
        const error = await append.then(
          () => undefined,
          (reason: unknown) => reason,
        );
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({ expected, actual });
      };

      it('no_stream: accepted for a new stream, refused for an existing one, and the refused events are not written', async () => {
        const tenant = freshTenant();
        const stream = streams.workspace(tenant);
        await store.append(stream, [workspaceCreated(tenant)], 'no_stream');

        await expectConflict(store.append(stream, [workspaceCreated(tenant)], 'no_stream'), 'no_stream', 0n);

        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('stream_exists: refused for a missing stream (nothing is created), accepted for an existing one', async () => {
        const tenant = freshTenant();
        const stream = streams.clinic(tenant, 'c1');
        await expectConflict(store.append(stream, [clinicOpened(tenant, 'c1')], 'stream_exists'), 'stream_exists', 'no_stream');
        expect(await store.readStream(stream)).toEqual([]);
        expect(await store.streamNames(stream)).toEqual([]);

        await store.append(stream, [clinicOpened(tenant, 'c1')], 'no_stream');
        const result = await store.append(stream, [clinicRenamed(tenant, 'c1', 'B'), clinicRenamed(tenant, 'c1', 'C')], 'stream_exists');

        expect(result.nextExpectedRevision).toBe(2n);
        expect((await store.readStream(stream)).map((event) => event.streamRevision)).toEqual([0n, 1n, 2n]);
      });

      it('any: accepted for a missing stream and for an existing one', async () => {
        const tenant = freshTenant();
        const stream = streams.clinic(tenant, 'c1');

        const first = await store.append(stream, [clinicOpened(tenant, 'c1')], 'any');
        const second = await store.append(stream, [clinicRenamed(tenant, 'c1', 'B')], 'any');

        expect([first.nextExpectedRevision, second.nextExpectedRevision]).toEqual([0n, 1n]);
      });

      it('exact revision: accepted when it is the revision of the last event, refused when stale or when the stream is missing', async () => {
        const tenant = freshTenant();
        const stream = streams.clinic(tenant, 'c1');
        await expectConflict(store.append(stream, [clinicOpened(tenant, 'c1')], 0n), 0n, 'no_stream');
        await store.append(stream, [clinicOpened(tenant, 'c1')], 'no_stream');

        const next = await store.append(stream, [clinicRenamed(tenant, 'c1', 'B')], 0n);
        await expectConflict(store.append(stream, [clinicRenamed(tenant, 'c1', 'stale')], 0n), 0n, 1n);
        await store.append(stream, [clinicRenamed(tenant, 'c1', 'C')], next.nextExpectedRevision);

        expect((await store.readStream(stream)).map((event) => event.data)).toEqual([
          expect.objectContaining({ name: 'Zahnklinik Süd – Ø 2' }),
          { clinicId: 'c1', name: 'B' },
          { clinicId: 'c1', name: 'C' },
        ]);
      });

      it('a write without events only checks the expectation', async () => {
        const tenant = freshTenant();
        const stream = streams.workspace(tenant);
        expect((await store.append(stream, [], 'no_stream')).nextExpectedRevision).toBe(-1n);
        await store.append(stream, [workspaceCreated(tenant)], 'no_stream');

        expect((await store.append(stream, [], 0n)).nextExpectedRevision).toBe(0n);
        await expectConflict(store.append(stream, [], 'no_stream'), 'no_stream', 0n);
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('given two writers expecting the same revision at once, then exactly one succeeds', async () => {
        const tenant = freshTenant();
        const stream = streams.clinic(tenant, 'c1');
        await store.append(stream, [clinicOpened(tenant, 'c1')], 'no_stream');

        const outcomes = await Promise.allSettled([
          store.append(stream, [clinicRenamed(tenant, 'c1', 'left')], 0n),
          store.append(stream, [clinicRenamed(tenant, 'c1', 'right')], 0n),
        ]);

        expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
        const rejected = outcomes.find((outcome) => outcome.status === 'rejected');
        expect(rejected?.reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('given two writers creating the same stream at once, then exactly one succeeds', async () => {
        const tenant = freshTenant();
        const stream = streams.workspace(tenant);

        const outcomes = await Promise.allSettled([
          store.append(stream, [workspaceCreated(tenant)], 'no_stream'),
          store.append(stream, [workspaceCreated(tenant)], 'no_stream'),
        ]);

        expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect(await store.readStream(stream)).toHaveLength(1);
      });
    });

    describe('appendMany', () => {
      it('appends to several streams and reports each write', async () => {
        const tenant = freshTenant();
        const workspace = streams.workspace(tenant);
        const clinic = streams.clinic(tenant, 'c1');

        const results = await store.appendMany([
          { streamName: workspace, expectedRevision: 'no_stream', events: [workspaceCreated(tenant)] },
          { streamName: clinic, expectedRevision: 'no_stream', events: [clinicOpened(tenant, 'c1'), clinicRenamed(tenant, 'c1', 'B')] },
        ]);

        const [workspaceEvents, clinicEvents] = [await store.readStream(workspace), await store.readStream(clinic)];
        expect(results).toEqual([
          { nextExpectedRevision: 0n, position: workspaceEvents[0]?.position },
          { nextExpectedRevision: 1n, position: clinicEvents[1]?.position },
        ]);
      });

      it('given one stream written twice in one call, then the second write sees the first', async () => {
        const tenant = freshTenant();
        const clinic = streams.clinic(tenant, 'c1');
        const workspace = streams.workspace(tenant);

        const results = await store.appendMany([
          { streamName: clinic, expectedRevision: 'no_stream', events: [clinicOpened(tenant, 'c1')] },
          { streamName: workspace, expectedRevision: 'any', events: [workspaceCreated(tenant)] },
          { streamName: clinic, expectedRevision: 0n, events: [clinicRenamed(tenant, 'c1', 'B')] },
        ]);

        expect(results.map((result) => result.nextExpectedRevision)).toEqual([0n, 0n, 1n]);
        expect((await store.readStream(clinic)).map((event) => event.type)).toEqual(['ClinicOpened', 'ClinicRenamed']);
      });

      it('given writes that come back to a stream, then the log holds every event in the order of the writes, across streams', async () => {
        const tenant = freshTenant();
        const clinic = streams.clinic(tenant, 'c1');
        const workspace = streams.workspace(tenant);

        const second = streams.clinic(tenant, 'c2');
        // Causal order across streams (an order picked, then its fulfillment dispatched) must survive one call.
        await store.appendMany([
          { streamName: clinic, expectedRevision: 'no_stream', events: [clinicOpened(tenant, 'c1')] },
          { streamName: workspace, expectedRevision: 'no_stream', events: [workspaceCreated(tenant)] },
          { streamName: clinic, expectedRevision: 0n, events: [clinicRenamed(tenant, 'c1', 'B')] },
          { streamName: workspace, expectedRevision: 0n, events: [workspaceSuspended(tenant)] },
          { streamName: second, expectedRevision: 'no_stream', events: [clinicOpened(tenant, 'c2')] },
        ]);

        const logged = [...(await store.readStream(clinic)), ...(await store.readStream(workspace)), ...(await store.readStream(second))].sort((a, b) =>
          compareLogPositions(a.position, b.position),
        );
        expect(logged.map((event) => event.type)).toEqual(['ClinicOpened', 'WorkspaceCreated', 'ClinicRenamed', 'WorkspaceSuspended', 'ClinicOpened']);
      });

      it('given a conflict in a later write, then it throws, and an atomic store writes nothing (otherwise the earlier writes stay)', async () => {
        const tenant = freshTenant();
        const workspace = streams.workspace(tenant);
        const clinic = streams.clinic(tenant, 'c1');
        await store.append(clinic, [clinicOpened(tenant, 'c1')], 'no_stream');

        const attempt = store.appendMany([
          { streamName: workspace, expectedRevision: 'no_stream', events: [workspaceCreated(tenant)] },
          { streamName: clinic, expectedRevision: 'no_stream', events: [clinicRenamed(tenant, 'c1', 'B')] },
        ]);

        await expect(attempt).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(workspace)).toHaveLength(subject.atomicAppendMany ? 0 : 1);
        expect(await store.readStream(clinic)).toHaveLength(1);
      });
    });

    describe('readAll', () => {
      it('reads the log in order across streams, in batches from an exclusive position, and says when it is at the head', async () => {
        const tenant = freshTenant();
        const start = await freshStart(store);
        const other = randomUUID();
        const writes: [string, EventEnvelope, 'no_stream' | bigint][] = [
          [streams.workspace(tenant), workspaceCreated(tenant), 'no_stream'],
          [streams.clinic(tenant, 'c1'), clinicOpened(tenant, 'c1'), 'no_stream'],
          [streams.clinic(tenant, 'c2'), clinicOpened(tenant, 'c2'), 'no_stream'],
          [streams.clinic(tenant, 'c1'), clinicRenamed(tenant, 'c1', 'B'), 0n],
          [streams.workspace(other), workspaceCreated(other), 'no_stream'],
        ];
        let last = start;
        for (const [stream, event, expected] of writes) last = (await store.append(stream, [event], expected)).position;
        const appended = writes.map(([, event]) => event);
        await visibleThrough(store, last);

        const first = await store.readAll(start, 2);
        const second = await store.readAll(first.next, 2);
        const third = await store.readAll(second.next, 2);
        const past = await store.readAll(third.next, 2);

        expect([first, second, third].map((batch) => batch.events.length)).toEqual([2, 2, 1]);
        expect([first.atHead, second.atHead, third.atHead]).toEqual([false, false, true]);
        expect(first.next).toEqual(first.events[1]?.position);
        const all = [...first.events, ...second.events, ...third.events];
        expect(ids(all)).toEqual(appended.map((event) => event.eventId));
        expectStrictlyIncreasing(all.map((event) => event.position));
        expect(past).toEqual({ events: [], next: third.next, atHead: true });
        expect(await store.readAll(start, 10)).toMatchObject({ atHead: true, next: third.next });
      });

      it('refuses a batch size below 1', async () => {
        await expect(store.readAll(logStart, 0)).rejects.toBeInstanceOf(RangeError);
      });
    });

    describe('head', () => {
      it('given appends, then head is at the last event, counts every event, and carries its recordedAt', async () => {
        const tenant = freshTenant();
        await freshStart(store);
        const before = await store.head();

        await store.append(streams.workspace(tenant), [workspaceCreated(tenant)], 'no_stream');
        const last = await store.append(streams.clinic(tenant, 'c1'), [clinicOpened(tenant, 'c1'), clinicRenamed(tenant, 'c1', 'B')], 'no_stream');
        await visibleThrough(store, last.position);
        const head = await store.head();

        const [, lastEvent] = await store.readStream(streams.clinic(tenant, 'c1'));
        expect(head).toEqual({ position: last.position, eventCount: before.eventCount + 3n, lastRecordedAt: lastEvent?.recordedAt });
        expect(head.lastRecordedAt).toMatch(isoMs);
      });
    });

    describe('subscribe', () => {
      it('given earlier events, then it catches up in batches, then delivers a later append live, and stops when aborted', async () => {
        const tenant = freshTenant();
        const start = await freshStart(store);
        const earlier = [workspaceCreated(tenant), clinicOpened(tenant, 'c1'), clinicOpened(tenant, 'c2')];
        await store.append(streams.workspace(tenant), earlier.slice(0, 1), 'no_stream');
        await store.append(streams.clinic(tenant, 'c1'), earlier.slice(1, 2), 'no_stream');
        await store.append(streams.clinic(tenant, 'c2'), earlier.slice(2, 3), 'no_stream');

        const subscription = collect(store, start, 2);
        await eventually(() => subscription.events().length >= 3);
        const later = clinicRenamed(tenant, 'c1', 'live');
        await store.append(streams.clinic(tenant, 'c1'), [later], 0n);
        await eventually(() => subscription.events().length >= 4);
        const stoppedAt = Date.now();
        await subscription.stop();

        expect(Date.now() - stoppedAt).toBeLessThan(1000);
        expect(ids(subscription.events())).toEqual([...earlier, later].map((event) => event.eventId));
        expect(subscription.batches.every((batch) => batch.length > 0 && batch.length <= 2)).toBe(true);
        expectStrictlyIncreasing(subscription.events().map((event) => event.position));
      });

      it('given a consumer that breaks out of the loop, then the subscription ends and the store keeps working', async () => {
        const tenant = freshTenant();
        const start = await freshStart(store);
        await store.append(streams.workspace(tenant), [workspaceCreated(tenant)], 'no_stream');

        const seen: RecordedEvent[] = [];
        for await (const batch of store.subscribe({ from: start })) {
          seen.push(...batch);
          break;
        }

        expect(seen.map((event) => event.tenantId)).toEqual([tenant]);
        const second = await store.append(streams.clinic(tenant, 'c1'), [clinicOpened(tenant, 'c1')], 'no_stream');
        await visibleThrough(store, second.position);
        expect((await store.readAll(start, 10)).events).toHaveLength(2);
      });

      it('given an aborted signal, then it yields nothing', async () => {
        const controller = new AbortController();
        controller.abort();
        const batches: unknown[] = [];
        for await (const batch of store.subscribe({ from: (await store.head()).position, signal: controller.signal })) batches.push(batch);
        expect(batches).toEqual([]);
      });
    });

    describe('streamNames', () => {
      it('lists the existing streams that start with a prefix, sorted, treating every character literally', async () => {
        const id = randomUUID();
        const tenant = `t_${id}`;
        const lookalike = `tx${id}`; // what `t_` would match as a LIKE pattern
        await store.append(streams.clinic(tenant, 'c2'), [clinicOpened(tenant, 'c2')], 'no_stream');
        await store.append(streams.clinic(tenant, 'c1'), [clinicOpened(tenant, 'c1')], 'no_stream');
        await store.append(streams.item(tenant, 'i1'), [itemStatusChanged(tenant, 'i1')], 'no_stream');
        await store.append(streams.clinic(lookalike, 'c1'), [clinicOpened(lookalike, 'c1')], 'no_stream');

        expect(await store.streamNames(`supply.clinic-${tenant}.`)).toEqual([streams.clinic(tenant, 'c1'), streams.clinic(tenant, 'c2')]);
        expect(await store.streamNames(`supply.item-${tenant}.`)).toEqual([streams.item(tenant, 'i1')]);
        expect(await store.streamNames(`supply.clinic-t%${id}`)).toEqual([]);
      });
    });

    describe('late commits', () => {
      it('given an older transaction still open while a newer one commits, then readers deliver neither until the older commits, then both in log order', async ({ skip }) => {
        const holdAppend = subject.holdAppend;
        if (!holdAppend) {
          skip();
          return;
        }
        const tenant = freshTenant();
        const start = await freshStart(store);
        const subscription = collect(store, start);
        const older = [clinicOpened(tenant, 'a'), clinicRenamed(tenant, 'a', 'A2')];
        const newer = clinicOpened(tenant, 'b');

        const held = await holdAppend([{ streamName: streams.clinic(tenant, 'a'), expectedRevision: 'no_stream', events: older }]);
        // Not awaited: where writers serialise (PGlite), B waits for A and awaiting it would deadlock.
        const appendNewer = store.append(streams.clinic(tenant, 'b'), [newer], 'no_stream');
        appendNewer.catch(() => {});
        const newerCommittedFirst = await Promise.race([appendNewer.then(() => true), delay(1000).then(() => false)]);
        const probe = store.readAll(start, 10);
        probe.catch(() => {});
        const probed = await Promise.race([probe, delay(300).then(() => undefined)]);

        if (!subject.serialisesWriters) expect(newerCommittedFirst).toBe(true);
        if (probed) expect(probed.events).toEqual([]);
        expect(subscription.events()).toEqual([]);

        await held.commit();
        const newerResult = await appendNewer;
        await eventually(() => subscription.events().length >= 3);
        await subscription.stop();

        expect(ids(subscription.events())).toEqual([...older, newer].map((event) => event.eventId));
        expectStrictlyIncreasing(subscription.events().map((event) => event.position));
        await visibleThrough(store, newerResult.position);
        expect(ids((await store.readAll(start, 10)).events)).toEqual([...older, newer].map((event) => event.eventId));
      });
    });
  });
}
