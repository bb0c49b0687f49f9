import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPgliteTestDatabase, type TestDatabase } from '../../test/support/databases.js';
import { createDatabasePool } from './db.js';
import { sql } from './sql.js';

describe('the embedded database served to several connections at once', () => {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createPgliteTestDatabase({ migrated: false });
  });
  afterAll(async () => database?.close());

  test('concurrent parameterised queries on different connections each get their own rows', async () => {
    if (!database) throw new Error('no database');
    const { url } = database;
    // Several pools, as several processes would be, each with several connections.
    const pools = await Promise.all([1, 2, 3].map(() => createDatabasePool(url, 4, 'pglite')));
    const numbers = Array.from({ length: 600 }, (_, index) => index);
    const results = await Promise.allSettled(
      numbers.map(async (n) => {
        const pool = pools[n % pools.length] ?? database?.pool;
        if (!pool) throw new Error('no pool');
        const query = sql.type(z.object({ n: z.number(), text: z.string() }))`SELECT ${n}::int AS n, ${`row-${n}`}::text AS text`;
        // Transactions begin and end with statements of their own, between which others queue.
        const row = n % 2 === 0 ? await pool.one(query) : await pool.transaction(async (tx) => tx.one(query));
        return `${row.n}:${row.text}`;
      }),
    );
    await Promise.all(pools.map((pool) => pool.end()));
    const failures = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
    expect(failures).toEqual([]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : undefined))).toEqual(numbers.map((n) => `${n}:row-${n}`));
  }, 20_000);

  test('a failing statement on one connection does not stop the others', async () => {
    if (!database) throw new Error('no database');
    const { pool } = database;
    const outcomes = await Promise.allSettled([
      pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT 1 / ${0}::int AS n`),
      ...[1, 2, 3].map((n) => pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT ${n}::int AS n`)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT ${42}::int AS n`)).toBe(42);
  });
});
