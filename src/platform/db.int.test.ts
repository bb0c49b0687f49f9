import { SchemaValidationError } from 'slonik';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPgliteTestDatabase, createPostgresTestDatabase, type TestDatabase } from '../../test/support/databases.js';
import { services } from '../../test/support/services.js';
import { sql } from './sql.js';

const cases = [
  { name: 'real Postgres', enabled: services.postgres, open: createPostgresTestDatabase },
  { name: 'embedded PGlite', enabled: true, open: createPgliteTestDatabase },
];

for (const { name, enabled, open } of cases) {
  describe.runIf(enabled)(`the database pool on ${name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await open({ migrated: false });
    });
    afterAll(async () => {
      await database.close();
    });

    test('rows are checked against the zod schema of the query', async () => {
      const query = sql.type(z.object({ label: z.string() }))`SELECT 1 AS label`;
      await expect(database.pool.one(query)).rejects.toBeInstanceOf(SchemaValidationError);
    });

    test('parsed rows are what the schema returns', async () => {
      const row = await database.pool.one(sql.type(z.object({ n: z.coerce.number().transform((n) => n * 2) }))`SELECT 21 AS n`);
      expect(row).toEqual({ n: 42 });
    });

    test('timestamps leave the database as ISO 8601 UTC with milliseconds, whatever the offset', async () => {
      const at = await database.pool.oneFirst(
        sql.type(z.object({ at: z.string() }))`SELECT '2026-11-22 10:15:30.123456+05:30'::timestamptz AS at`,
      );
      expect(at).toBe('2026-11-22T04:45:30.123Z');
    });

    test('sessions run in UTC', async () => {
      const zone = await database.pool.oneFirst(sql.type(z.object({ zone: z.string() }))`SELECT current_setting('TimeZone') AS zone`);
      expect(['UTC', 'Etc/UTC', 'GMT']).toContain(zone);
    });
  });
}
