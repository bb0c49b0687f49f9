import type { Config } from '../config/config.js';
import type { Database } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import type { EventStore } from './eventStore.js';
import { createPostgresEventStore } from './postgresEventStore.js';

/** EventStoreDB when EVENTSTORE_URL is set; otherwise the `events` table of the service's database. */
export async function createEventStore(options: {
  readonly config: Config;
  readonly database: Database;
  readonly logger: Logger;
}): Promise<EventStore> {
  const { config, database, logger } = options;
  if (config.eventStoreUrl !== undefined) {
    // Loaded only when configured: the gRPC client is heavy and most processes never use it.
    const { createEventStoreDbEventStore } = await import('./eventStoreDbEventStore.js');
    return createEventStoreDbEventStore({ connectionString: config.eventStoreUrl, logger });
  }
  return createPostgresEventStore({ pool: database.pool, kind: database.kind, connectionUri: database.connectionUri, logger });
}
