import { describe, expect, test } from 'vitest';
import { loadMigrations, splitStatements } from './migrate.js';

describe('migration statements', () => {
  test('split at top-level semicolons only', () => {
    const text = `
      -- a comment; with a semicolon
      CREATE TABLE a (x text DEFAULT 'a;b');
      /* block; comment */
      CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'no; never';
      END;
      $$;
      CREATE INDEX a_x ON a (x)
    `;
    const statements = splitStatements(text);
    expect(statements).toHaveLength(3);
    expect(statements[0]).toContain("DEFAULT 'a;b')");
    expect(statements[1]).toContain("RAISE EXCEPTION 'no; never';");
    expect(statements[1]?.trim().endsWith('$$')).toBe(true);
    expect(statements[2]).toBe('CREATE INDEX a_x ON a (x)');
  });

  test('a file of comments only has no statement', () => {
    expect(splitStatements('-- nothing here;\n/* nor; here */\n')).toEqual([]);
  });

  test('the shipped migrations are numbered without gaps', async () => {
    const migrations = await loadMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_m, index) => index + 1));
  });
});
