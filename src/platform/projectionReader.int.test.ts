import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPgliteTestDatabase, createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { createProjectionReader, isAccessRefused, type ProjectionReader } from './projectionReader.js';
import { sql } from './sql.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createPostgresTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const row = z.object({ n: z.bigint(), label: z.string(), at: z.string(), note: z.string().optional() }).strict();
const rowsOf = (reader: ProjectionReader, guard = sql.fragment`TRUE`) =>
  reader.rows(
    sql.type(row)`
      SELECT n, 'row ' || n AS label, timestamptz '2026-01-05 10:00:00.5+02' AS at, CASE WHEN n = 2 THEN 'second' END AS note
      FROM generate_series(1::int8, 3::int8) AS n
      WHERE ${guard}
      ORDER BY n
    `,
    { nullMeansAbsent: true },
  );

describe('the projection reader (real Postgres)', () => {
  test('given a read, then its rows come with the service types (bigint, ISO UTC timestamps) and NULL columns absent', async () => {
    const reader = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: false });
    try {
      expect(await rowsOf(reader)).toEqual([
        { n: 1n, label: 'row 1', at: '2026-01-05T08:00:00.500Z' },
        { n: 2n, label: 'row 2', at: '2026-01-05T08:00:00.500Z', note: 'second' },
        { n: 3n, label: 'row 3', at: '2026-01-05T08:00:00.500Z' },
      ]);
    } finally {
      await reader.close();
    }
  });

  test('given the same read three times, then it runs as one named prepared statement of the connection, planned once (generic plan)', async () => {
    const reader = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: false });
    try {
      // With a parameter, as every read has: Postgres plans a statement without any always once.
      const parameterised = sql.fragment`n <= ${3}`;
      for (let i = 0; i < 3; i += 1) expect(await rowsOf(reader, parameterised)).toHaveLength(3);
      const prepared = await reader.rows(
        sql.type(z.object({ name: z.string(), statement: z.string(), genericPlans: z.bigint(), customPlans: z.bigint() }))`
          SELECT name, statement, generic_plans AS "genericPlans", custom_plans AS "customPlans" FROM pg_prepared_statements ORDER BY name
        `,
      );
      const reads = prepared.filter((statement) => statement.statement.includes('generate_series'));
      expect(reads).toHaveLength(1);
      expect(reads[0]?.name).toMatch(/^projection_read_\d+$/);
      // Left to choose, Postgres plans a parameterised LIMIT or guard anew on every execution.
      expect(reads[0]).toMatchObject({ genericPlans: 3n, customPlans: 0n });
    } finally {
      await reader.close();
    }
  });

  test('given rows checking on, when a row does not match its schema, then the read fails; with it off, the row passes as it is', async () => {
    const strict = z.object({ n: z.number() }).strict();
    const query = sql.type(strict)`SELECT 1::int8 AS n`;
    const checking = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: true });
    const trusting = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: false });
    try {
      await expect(checking.rows(query)).rejects.toThrow();
      expect(await trusting.rows(query)).toEqual([{ n: 1n }]);
    } finally {
      await checking.close();
      await trusting.close();
    }
  });

  test('given rows built from their columns, then they are the rows the columns name; a builder that mixes up columns is refused when rows are checked', async () => {
    const checking = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: true });
    const trusting = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: false });
    const query = sql.type(row)`
      SELECT n, 'row ' || n AS label, timestamptz '2026-01-05 10:00:00.5+02' AS at, CASE WHEN n = 2 THEN 'second' END AS note
      FROM generate_series(1::int8, 3::int8) AS n ORDER BY n
    `;
    type Row = z.infer<typeof row>;
    const fromColumns = ([n, label, at, note]: readonly unknown[]) => ({ n, label, at, note }) as Row;
    const mixedUp = ([n, label, at, note]: readonly unknown[]) => ({ n, label: at, at: label, note }) as Row;
    try {
      for (const reader of [checking, trusting]) {
        expect(await reader.rows(query, { nullMeansAbsent: true, fromColumns })).toEqual([
          { n: 1n, label: 'row 1', at: '2026-01-05T08:00:00.500Z' },
          { n: 2n, label: 'row 2', at: '2026-01-05T08:00:00.500Z', note: 'second' },
          { n: 3n, label: 'row 3', at: '2026-01-05T08:00:00.500Z' },
        ]);
      }
      await expect(checking.rows(query, { fromColumns: mixedUp })).rejects.toThrow(/is not the row they name/);
      await expect(checking.rows(query, { fromColumns: ([n]: readonly unknown[]) => ({ n }) as Row })).rejects.toThrow(/is not the row they name/);
    } finally {
      await checking.close();
      await trusting.close();
    }
  });

  test('given a guard that fails, then the statement is refused before any row, even one that matches nothing', async () => {
    const reader = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: true });
    try {
      const refused = sql.fragment`(SELECT CASE WHEN false THEN true ELSE access_refused() END)`;
      const error = await rowsOf(reader, refused).catch((caught: unknown) => caught);
      expect(isAccessRefused(error)).toBe(true);
      const none = await reader
        .rows(sql.type(z.object({ n: z.number() }))`SELECT 1 AS n FROM generate_series(1, 0) WHERE ${refused}`)
        .catch((caught: unknown) => caught);
      expect(isAccessRefused(none)).toBe(true);
      // An error of Postgres itself is not taken for a refusal.
      const other = await reader.rows(sql.type(z.object({ n: z.number() }))`SELECT 1 / 0 AS n`).catch((caught: unknown) => caught);
      expect(isAccessRefused(other)).toBe(false);
    } finally {
      await reader.close();
    }
  });

  test('given a read that Postgres aborts to break a deadlock, then it is run again and answers', async () => {
    await database.pool.query(sql.typeAlias('void')`CREATE TABLE deadlock_a (n int8)`);
    await database.pool.query(sql.typeAlias('void')`CREATE TABLE deadlock_b (n int8)`);
    const reader = createProjectionReader(database.url, { kind: 'postgres', maximumPoolSize: 1, logger: silentLogger, validateRows: false });
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    const waiting = async (table: string) => {
      const waiters = await database.pool.anyFirst(sql.type(z.object({ pid: z.number() }))`
        SELECT pid FROM pg_locks WHERE locktype = 'relation' AND relation = ${table}::regclass AND NOT granted
      `);
      return waiters.length > 0;
    };
    const until = async (check: () => Promise<boolean>) => {
      const deadline = performance.now() + 30_000;
      while (!(await check())) if (performance.now() > deadline) throw new Error('the sessions never reached the expected locks');
    };
    try {
      // The other session holds b and will want a; the read takes a (its first relation), then waits for b.
      await other.query('BEGIN');
      // So that the read, not the other session, is the one whose deadlock check finds the cycle.
      await other.query("SET LOCAL deadlock_timeout = '60s'");
      await other.query('LOCK TABLE deadlock_b IN ACCESS EXCLUSIVE MODE');
      const read = reader.rows(sql.type(z.object({ n: z.bigint() }))`SELECT count(*) AS n FROM deadlock_a, deadlock_b`);
      read.catch(() => undefined);
      await until(() => waiting('deadlock_b'));
      const otherTakesA = other.query('LOCK TABLE deadlock_a IN ACCESS EXCLUSIVE MODE');
      await otherTakesA;
      await other.query('COMMIT');
      expect(await read).toEqual([{ n: 0n }]);
    } finally {
      await other.end();
      await reader.close();
    }
  });
});

describe('the projection reader on PGlite (one session shared by every connection)', () => {
  test('given the same read from two connections, then both answer (statements stay unnamed), and a failing guard is refused', async () => {
    const embedded = await createPgliteTestDatabase();
    const reader = createProjectionReader(embedded.url, { kind: 'pglite', maximumPoolSize: 2, logger: silentLogger, validateRows: true });
    try {
      const answers = await Promise.all([rowsOf(reader), rowsOf(reader), rowsOf(reader)]);
      for (const rows of answers) expect(rows.map((r) => r.n)).toEqual([1n, 2n, 3n]);
      const error = await rowsOf(reader, sql.fragment`(SELECT CASE WHEN false THEN true ELSE access_refused() END)`).catch((caught: unknown) => caught);
      expect(isAccessRefused(error)).toBe(true);
    } finally {
      await reader.close();
      await embedded.close();
    }
  }, 60_000);
});
