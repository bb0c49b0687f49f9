import type { Config } from '../config/config.js';
import { createEventStore } from '../eventStore/createEventStore.js';
import type { EventStore } from '../eventStore/eventStore.js';
import type { Clock } from '../platform/clock.js';
import { openDatabase, type Database } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import { migrate } from '../platform/migrate.js';
import { namingSetting } from '../platform/startupErrors.js';

/** The composition root's shared parts: database (migrated), event store, clock, logger. */
export type Services = {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly database: Database;
  readonly eventStore: EventStore;
  close(): Promise<void>;
};

export async function openServices(
  config: Config,
  logger: Logger,
  clock: Clock,
  options: { mustHostEmbedded?: boolean } = {},
): Promise<Services> {
  const { eventStoreUrl } = config;
  const database = await openDatabase(config, logger, { mustHostEmbedded: options.mustHostEmbedded ?? false });
  try {
    await migrate(database.pool, logger);
    const eventStore = await createEventStore({ config, database, logger });
    if (eventStoreUrl !== undefined) {
      await namingSetting('EVENTSTORE_URL', 'EventStoreDB', eventStoreUrl, () => eventStore.head()).catch(async (error: unknown) => {
        await eventStore.close();
        throw error;
      });
    }
    return {
      config,
      logger,
      clock,
      database,
      eventStore,
      close: async () => {
        await eventStore.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
