import { openDatabase } from '../../platform/db.js';
import { migrate } from '../../platform/migrate.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { parseCommandOptions } from '../options.js';
import { printJson } from '../output.js';

export const migrateCommand: Command = async ({ args, config, logger }) => {
  parseCommandOptions(args, ['migrate'], commandSpec('migrate'));
  const database = await openDatabase(config, logger);
  try {
    const result = await migrate(database.pool, logger);
    printJson({ database: database.kind, applied: result.applied, current: result.current });
    return 0;
  } finally {
    await database.close();
  }
};
