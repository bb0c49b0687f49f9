import { openDatabase } from '../../platform/db.js';
import path from 'node:path';
import { databaseName, migrate } from '../../platform/migrate.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { parseCommandOptions } from '../options.js';
import { printJson } from '../output.js';

/** Applies the migrations not applied yet; prints `{ engine, database, [dataDir,] applied, current }`. */
export const migrateCommand: Command = async ({ args, config, logger }) => {
  parseCommandOptions(args, ['migrate'], commandSpec('migrate'));
  const database = await openDatabase(config, logger);
  try {
    const result = await migrate(database.pool, logger);
    // Which database was migrated: the engine, the database's name and, embedded, the folder holding it.
    const where = database.kind === 'pglite' ? { dataDir: path.resolve(config.dataDir) } : {};
    printJson({ engine: database.kind, database: await databaseName(database.pool), ...where, applied: result.applied, current: result.current });
    return 0;
  } finally {
    await database.close();
  }
};
