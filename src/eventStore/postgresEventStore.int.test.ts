import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPgliteTestDatabase, createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { eventually } from '../../test/support/eventually.js';
import { services } from '../../test/support/services.js';
import { newEvent, streams } from '../events/index.js';
import { sql } from '../platform/sql.js';
import { appendInTransaction } from './appendInTransaction.js';
import type { RecordedEvent, StreamWrite } from './eventStore.js';
import { describeEventStoreContract, type EventStoreContractSubject, type HeldAppend } from './eventStoreContract.js';
import { createPostgresEventStore } from './postgresEventStore.js';

/** Waits until `check` answers true. */
async function until(check: () => Promise<boolean>): Promise<void> {
  await eventually(async () => expect(await check()).toBe(true), { timeoutMs: 90_000 });
}

/** Runs the adapter's own append in a transaction that stays open until commit(). */
function holdAppendOn(pool: DatabasePool, notify: boolean) {
  return async (writes: readonly StreamWrite[]): Promise<HeldAppend> => {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let appended = () => {};
    const isAppended = new Promise<void>((resolve) => {
      appended = resolve;
    });
    const committed = pool.transaction(async (transaction) => {
      await appendInTransaction(transaction, writes, { notify });
      appended();
      await released;
    });
    committed.catch(() => {});
    await Promise.race([isAppended, committed]);
    return {
      commit: async () => {
        release();
        await committed;
      },
    };
  };
}

async function subjectOn(database: TestDatabase, pollIntervalMs?: number): Promise<EventStoreContractSubject> {
  const store = createPostgresEventStore({
    pool: database.pool,
    kind: database.kind,
    logger: silentLogger,
    connectionUri: database.url,
    pollIntervalMs,
  });
  return {
    store,
    atomicAppendMany: true,
    serialisesWriters: database.kind === 'pglite',
    holdAppend: holdAppendOn(database.pool, database.kind === 'postgres'),
    close: async () => {
      await store.close();
      await database.close();
    },
  };
}

describe.runIf(services.postgres)('Postgres event store on real Postgres', () => {
  describeEventStoreContract('contract', async () => subjectOn(await createPostgresTestDatabase()));

  describe('live delivery across processes', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createPostgresTestDatabase();
    });
    afterAll(async () => {
      await database?.close();
    });

    const listeners = () =>
      database.pool.oneFirst(sql.type(z.object({ count: z.bigint() }))`
        SELECT count(*) AS count FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'
      `);

    it('given a subscriber on another store instance that polls rarely, when an event is appended, then the notification delivers it at once, and stopping releases the listener', async () => {
      const writer = createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url });
      const reader = createPostgresEventStore({
        pool: database.pool,
        kind: 'postgres',
        logger: silentLogger,
        connectionUri: database.url,
        pollIntervalMs: 3_600_000,
      });
      const tenant = randomUUID();
      const event = newEvent('WorkspaceCreated', { workspaceId: tenant, name: 'Praxis' }, { eventId: randomUUID(), tenantId: tenant, occurredAt: '2025-01-01T00:00:00.000Z' });
      const controller = new AbortController();
      const received: RecordedEvent[] = [];
      const consuming = (async () => {
        for await (const batch of reader.subscribe({ from: (await reader.head()).position, signal: controller.signal })) received.push(...batch);
      })();
      await until(async () => (await listeners()) === 1n);

      await writer.append(streams.workspace(tenant), [event], 'no_stream');
      // Delivery waits for the log's horizon: the oldest transaction in flight anywhere in the
      // cluster (other test files run theirs meanwhile) may hold it back for a while. The reader
      // polls once an hour, so an event delivered during the test was delivered by the notification.
      await until(async () => received.length === 1);
      controller.abort();
      await consuming;

      expect(received.map((recorded) => recorded.eventId)).toEqual([event.eventId]);
      await until(async () => (await listeners()) === 0n);
      await Promise.all([writer.close(), reader.close()]);
    }, 120_000);
  });
});

describe('Postgres event store on PGlite', () => {
  describeEventStoreContract('contract', async () => subjectOn(await createPgliteTestDatabase()));
});
