import { describe } from 'vitest';
import { silentLogger } from '../../test/support/databases.js';
import { services } from '../../test/support/services.js';
import { describeEventStoreContract } from './eventStoreContract.js';
import { createEventStoreDbEventStore } from './eventStoreDbEventStore.js';

// Runs only against a real server (docker compose up eventstore; EVENTSTORE_URL=esdb://127.0.0.1:2113?tls=false).
describe.runIf(services.eventStoreDb)('EventStoreDB event store', () => {
  describeEventStoreContract('contract', async () => {
    const store = createEventStoreDbEventStore({ connectionString: process.env.EVENTSTORE_URL ?? '', logger: silentLogger });
    return {
      store,
      atomicAppendMany: false,
      serialisesWriters: false,
      close: () => store.close(),
    };
  });
});
