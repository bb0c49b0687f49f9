import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPgliteTestDatabase, createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { eventually } from '../../test/support/eventually.js';
import { newEvent, streams, type EventEnvelope } from '../events/index.js';
import { sql } from '../platform/sql.js';
import { logStart, type EventStore, type LogBatch, type LogPosition, type RecordedEvent, type StreamAllOptions } from './eventStore.js';
import { createPostgresEventStore } from './postgresEventStore.js';

const tenantId = 'ws_stream';

function clinicEvent(index: number, name: string): EventEnvelope {
  return newEvent('ClinicRenamed', { clinicId: `cli_${index % 7}`, name }, { eventId: randomUUID(), tenantId, occurredAt: `2026-11-01T08:00:00.${String(index % 1000).padStart(3, '0')}Z` });
}

async function readAllOf(store: EventStore, from: LogPosition, batchSize: number): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (let position = from; ; ) {
    const batch = await store.readAll(position, batchSize);
    events.push(...batch.events);
    position = batch.next;
    if (batch.atHead) return events;
  }
}

async function streamed(store: EventStore, from: LogPosition, batchSize: number): Promise<LogBatch[]> {
  if (!store.streamAll) throw new Error('no streamAll');
  const batches: LogBatch[] = [];
  for await (const batch of store.streamAll(from, batchSize)) batches.push(batch);
  return batches;
}

/**
 * Readers stop below the oldest transaction running anywhere on the server (the log horizon), and
 * other work shares this server: wait until the appends are visible.
 */
async function visible(store: EventStore, count: number): Promise<void> {
  await eventually(async () => expect((await readAllOf(store, logStart, 1000)).length).toBeGreaterThanOrEqual(count));
}

describe('the Postgres log read as one stream (COPY TO STDOUT)', () => {
  let database: TestDatabase | undefined;
  let store: EventStore | undefined;
  /** The ids of the 300 events the set-up appends (other tests append more to the same log). */
  const setUpIds = new Set<string>();
  const subject = () => {
    if (!database || !store) throw new Error('no database');
    return { database, store };
  };

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    store = createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url });
    // Names that COPY's text format must escape, and text beyond ASCII.
    const awkward = ['tab\there', 'new\nline', 'back\\slash "quoted"', 'Zürich – 東京 🦷', 'cr\rreturn'];
    for (let write = 0; write < 12; write += 1) {
      const events = Array.from({ length: 25 }, (_, index) => clinicEvent(write * 25 + index, awkward[(write + index) % awkward.length] ?? 'x'));
      await store.appendMany([{ streamName: streams.clinic(tenantId, `cli_${write}`), expectedRevision: 'any', events }]);
      for (const event of events) setUpIds.add(event.eventId);
    }
    await visible(store, 300);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await database?.close();
  });

  test('gives the events readAll gives, field for field, in batches of the size asked', async () => {
    const { store } = subject();
    const expected = await readAllOf(store, logStart, 1000);
    const batches = await streamed(store, logStart, 40);
    expect(setUpIds.size).toBe(300);
    expect(expected.filter((event) => setUpIds.has(event.eventId))).toHaveLength(300);
    // Full batches of 40, then the rest (7 × 40 + 20 when the set-up's events are the whole log).
    const sizes = Array.from({ length: Math.ceil(expected.length / 40) }, (_, index) => Math.min(40, expected.length - index * 40));
    expect(batches.map((batch) => batch.events.length)).toEqual(sizes);
    expect(batches.flatMap((batch) => batch.events)).toEqual(expected);
    for (const batch of batches) expect(batch.next).toEqual(batch.events.at(-1)?.position);
  });

  test('starts after the position it is given', async () => {
    const { store } = subject();
    const all = await readAllOf(store, logStart, 1000);
    const middle = all[136];
    if (!middle) throw new Error('short log');
    const rest = (await streamed(store, middle.position, 1000)).flatMap((batch) => batch.events);
    expect(rest).toEqual(all.slice(137));
  });

  test('a consumer that stops early closes the stream connection', async () => {
    const { store, database } = subject();
    if (!store.streamAll) throw new Error('no streamAll');
    const copying = () =>
      database.pool.oneFirst(sql.type(z.object({ count: z.number() }))`
        SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%COPY (%'
      `);
    for await (const batch of store.streamAll(logStart, 5)) {
      expect(batch.events).toHaveLength(5);
      expect(await copying()).toBe(1);
      break;
    }
    await eventually(async () => expect(await copying()).toBe(0));
  });

  test('an event longer than what one read of the socket brings, escapes and text beyond ASCII included, comes through whole', async () => {
    const { store } = subject();
    const before = (await readAllOf(store, logStart, 1000)).length;
    // Several times the size of a socket read: the line spans chunks, a backslash or a multi-byte character may sit on a cut.
    const long = (seed: number) => Array.from({ length: 12_000 }, (_, index) => ['a\\b', 'Zürich 東京 🦷', 'tab\t"q"', 'x'][(index + seed) % 4]).join('');
    const events = [0, 1, 2].map((seed) =>
      newEvent('WorkspaceCreated', { workspaceId: `ws_long_${seed}`, name: long(seed) }, { eventId: randomUUID(), tenantId, occurredAt: '2026-11-01T09:00:00.000Z' }),
    );
    await store.appendMany([{ streamName: streams.clinic(tenantId, 'cli_long'), expectedRevision: 'any', events: [clinicEvent(1, 'short'), ...events, clinicEvent(2, 'after')] }]);
    await visible(store, before + 5);
    const expected = await readAllOf(store, logStart, 1000);
    const streamedEvents = (await streamed(store, logStart, 7)).flatMap((batch) => batch.events);
    expect(streamedEvents).toEqual(expected);
    expect(streamedEvents.filter((event) => event.type === 'WorkspaceCreated').map((event) => (event.data as { name: string }).name)).toEqual([0, 1, 2].map(long));
  });

  test('with dataOf, only events of those types carry their data; every event comes, in order, its envelope whole', async () => {
    const { store } = subject();
    if (!store.streamAll) throw new Error('no streamAll');
    const before = (await readAllOf(store, logStart, 1000)).length;
    const workspace = newEvent('WorkspaceCreated', { workspaceId: 'ws_data_of', name: 'kept' }, { eventId: randomUUID(), tenantId, occurredAt: '2026-11-01T09:30:00.000Z' });
    await store.appendMany([{ streamName: streams.clinic(tenantId, 'cli_data_of'), expectedRevision: 'any', events: [clinicEvent(3, 'left out'), workspace, clinicEvent(4, 'left out')] }]);
    await visible(store, before + 3);
    const all = await readAllOf(store, logStart, 1000);
    const read = async (dataOf: readonly string[]) => {
      const events: RecordedEvent[] = [];
      for await (const batch of store.streamAll?.(logStart, 7, { dataOf }) ?? []) events.push(...batch.events);
      return events;
    };
    const workspaces = await read(['WorkspaceCreated']);
    expect(workspaces).toEqual(all.map((event) => (event.type === 'WorkspaceCreated' ? event : { ...event, data: undefined })));
    expect(workspaces.filter((event) => event.data !== undefined).map((event) => event.type)).toContain('WorkspaceCreated');
    expect(workspaces.some((event) => event.type === 'ClinicRenamed' && event.data !== undefined)).toBe(false);
    // No type: no data at all; every type named: the same as no filter.
    expect((await read([])).every((event) => event.data === undefined)).toBe(true);
    expect(await read(['WorkspaceCreated', 'ClinicRenamed'])).toEqual(all);
    await expect(read(["ClinicRenamed') OR true --"])).rejects.toThrow(/not one/);
  });

  test('lean, every event comes in order with its type, tenant, times and data, and without its stream name, revision and id', async () => {
    const { store } = subject();
    if (!store.streamAll) throw new Error('no streamAll');
    const all = await readAllOf(store, logStart, 1000);
    expect(all.length).toBeGreaterThan(10);
    const read = async (options: StreamAllOptions) => {
      const events: RecordedEvent[] = [];
      for await (const batch of store.streamAll?.(logStart, 7, options) ?? []) events.push(...batch.events);
      return events;
    };
    expect(await read({ lean: true })).toEqual(all.map((event) => ({ ...event, streamName: '', streamRevision: -1n, eventId: '' })));
    // With dataOf as well: both left out.
    expect(await read({ lean: true, dataOf: ['WorkspaceCreated'] })).toEqual(
      all.map((event) => ({ ...event, streamName: '', streamRevision: -1n, eventId: '', data: event.type === 'WorkspaceCreated' ? event.data : undefined })),
    );
    expect(await read({ lean: false })).toEqual(all);
  });
});

describe('text that JSON must escape, in the columns eventLine quotes itself', () => {
  test.each(['postgres', 'pglite'] as const)('stream names and tenant ids with quotes, backslashes and control characters come through whole (%s)', async (kind) => {
    const database = kind === 'postgres' ? await createPostgresTestDatabase() : await createPgliteTestDatabase();
    const store = createPostgresEventStore({ pool: database.pool, kind, logger: silentLogger, connectionUri: database.url });
    try {
      const awkward = ['plain', 'q"uote', 'back\\slash', 'tab\there', 'new\nline', 'Zürich 🦷', '\u0001start'];
      const names = awkward.map((name, index) => `clinic-${name}-${index}`);
      await store.appendMany(
        awkward.map((name, index) => ({
          streamName: names[index] ?? '',
          expectedRevision: 'any' as const,
          events: [{ ...clinicEvent(index, 'x'), tenantId: `ws_${name}` }],
        })),
      );
      await visible(store, awkward.length);
      const paged = await readAllOf(store, logStart, 2);
      expect(paged.map((event) => event.streamName)).toEqual(names);
      expect(paged.map((event) => event.tenantId)).toEqual(awkward.map((name) => `ws_${name}`));
      expect((await store.readStream(names[1] ?? '')).map((event) => event.streamName)).toEqual([names[1]]);
      if (store.streamAll) expect((await streamed(store, logStart, 3)).flatMap((batch) => batch.events)).toEqual(paged);
    } finally {
      await store.close();
      await database.close();
    }
  }, 60_000);
});

describe('on PGlite', () => {
  test('the store offers no stream (it would hold the only session): replays read page by page', async () => {
    const database = await createPgliteTestDatabase();
    const store = createPostgresEventStore({ pool: database.pool, kind: 'pglite', logger: silentLogger, connectionUri: database.url });
    try {
      expect(store.streamAll).toBeUndefined();
    } finally {
      await store.close();
      await database.close();
    }
  }, 60_000);
});
