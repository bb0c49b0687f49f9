import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { forbiddenOrderTransitions } from '../../test/support/orderTransitions.js';
import { logStart } from '../eventStore/eventStore.js';
import { createPostgresEventStore } from '../eventStore/postgresEventStore.js';
import { seed } from './seed.js';

describe('seed into Postgres: the log keeps the causal order of order and fulfillment events', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });
  afterAll(async () => database?.close());

  it('given a seeded history read back in log order, then every order moves only as the order state machine allows', async () => {
    const store = createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url });
    try {
      // Transactions of 500 events hold whole lives of the showcase's fast orders, streams coming back within one.
      await seed({ eventStore: store, params: { seed: 7, tenants: 1, days: 30, scale: 'small', asOf: '2026-11-22T00:00:00.000Z' } });
      const logged = (await store.readAll(logStart, 100_000)).events;
      expect(logged.filter((e) => e.type === 'FulfillmentReceived').length).toBeGreaterThan(5);
      expect(forbiddenOrderTransitions(logged)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
