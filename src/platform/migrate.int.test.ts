import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPostgresTestDatabase, silentLogger } from '../../test/support/databases.js';
import { services } from '../../test/support/services.js';
import { createDatabasePool } from './db.js';
import { loadMigrations, migrate } from './migrate.js';
import { sql } from './sql.js';

describe.runIf(services.postgres)('migrations on real Postgres', () => {
  test('two processes migrating at once apply every file exactly once', async () => {
    const database = await createPostgresTestDatabase({ migrated: false });
    const other = await createDatabasePool(database.url, 2);
    try {
      const [first, second] = await Promise.all([migrate(database.pool, silentLogger), migrate(other, silentLogger)]);
      const all = (await loadMigrations()).map((m) => m.version);
      expect([...first.applied, ...second.applied].sort((a, b) => a - b)).toEqual(all);
      const recorded = await database.pool.anyFirst(sql.type(z.object({ version: z.number() }))`SELECT version FROM schema_migrations ORDER BY version`);
      expect(recorded).toEqual(all);
      expect((await migrate(database.pool, silentLogger)).applied).toEqual([]);
    } finally {
      await other.end();
      await database.close();
    }
  });

  test('a migration changed after it was applied is refused', async () => {
    const database = await createPostgresTestDatabase();
    try {
      await database.pool.query(sql.typeAlias('void')`UPDATE schema_migrations SET checksum = 'tampered' WHERE version = 1`);
      await expect(migrate(database.pool, silentLogger)).rejects.toThrow(/was changed after it was applied/);
    } finally {
      await database.close();
    }
  });

  test('the event log refuses updates and deletes', async () => {
    const database = await createPostgresTestDatabase();
    try {
      await expect(database.pool.query(sql.typeAlias('void')`DELETE FROM events`)).rejects.toThrow(/append-only/);
    } finally {
      await database.close();
    }
  });
});
