import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { sql } from '../src/platform/sql.js';
import { createPgliteTestDatabase, createPostgresTestDatabase, type TestDatabase } from './support/databases.js';
import { services } from './support/services.js';

/** Texts json_quote must quote exactly as JSON.stringify does. */
const texts = [
  '',
  'box_iZQU9z145IwbaZ',
  'a "quoted" name',
  'back\\slash \\" both',
  'tab\there, new\nline, return\r, feed\f, back\b',
  // Every control character a Postgres text can hold (not NUL), each alone and in a text.
  ...Array.from({ length: 31 }, (_, index) => String.fromCharCode(index + 1)),
  ...Array.from({ length: 31 }, (_, index) => `x${String.fromCharCode(index + 1)}y`),
  // Not escaped: DEL, non-ASCII letters, a character outside the BMP, the line and paragraph separators.
  'del\u007f',
  'Zahnärztin São Paulo 東京',
  'emoji 😀',
  'separators \u2028 \u2029',
  "apostrophe ' and slash /",
];

describe.each([
  ['PGlite', true, createPgliteTestDatabase],
  ['real Postgres', services.postgres, createPostgresTestDatabase],
] as const)('json_quote on %s: the JSON string literal of a text, as JSON.stringify writes it', (_name, available, create) => {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    if (available) database = await create();
  }, 60_000);
  afterAll(async () => database?.close());

  test.runIf(available)('every text quotes as JSON.stringify quotes it, and NULL stays NULL', async () => {
    if (!database) throw new Error('no database');
    const quoted = await database.pool.anyFirst(
      sql.type(z.object({ quoted: z.string().nullable() }))`SELECT json_quote(t) AS quoted FROM unnest(${sql.array(texts, 'text')}::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n`,
    );
    expect(quoted).toEqual(texts.map((text) => JSON.stringify(text)));
    expect(await database.pool.oneFirst(sql.type(z.object({ quoted: z.string().nullable() }))`SELECT json_quote(NULL) AS quoted`)).toBeNull();
  });

  test.runIf(available)('it is inlined into the expressions that call it: no function call per row', async () => {
    if (!database) throw new Error('no database');
    const plan = await database.pool.anyFirst(sql.type(z.object({ 'QUERY PLAN': z.string() }))`EXPLAIN (VERBOSE, COSTS OFF) SELECT json_quote(t) FROM unnest(${sql.array(['a'], 'text')}::text[]) AS u(t)`);
    expect(plan.join('\n')).not.toContain('json_quote');
  });
});
