import { createSqlTag } from 'slonik';
import { z } from 'zod';

/**
 * The one sql tag of the service. `void` is for statements that return no rows (DDL, writes
 * without RETURNING, `SELECT FROM f()`): the result parser rejects any row with a column.
 */
export const sql = createSqlTag({
  typeAliases: {
    void: z.object({}).strict(),
  },
});

/**
 * A token's text with pg's placeholders (`$1`…), as slonik's own executeQuery renders it for its
 * driver (slonik writes `$slonik_1`…): for the statements that run on a raw pg client (COPY, the
 * projection reader's named statements), still built with the `sql` tag.
 */
export function driverText(token: { readonly sql: string }): string {
  return token.sql.replaceAll('$slonik_', '$');
}

/** The values a statement template is bound to, by parameter name. */
export type TemplateValues<Names extends string> = Readonly<Record<Names, string | number | bigint | boolean | null>>;

/**
 * A statement of constant text, built once with the `sql` tag and then bound to each call's
 * values, instead of being built again (fragments, placeholders, text) on every call: `build` gets
 * a stand-in for each named parameter, and binding puts each call's value where its stand-in was.
 * Values that `build` wrote itself (a fragment's own) stay as they are. A stand-in holds a NUL,
 * which no text value of Postgres can, so it is never taken for a value.
 */
export function statementTemplate<Names extends string, Query extends { readonly sql: string; readonly values: readonly unknown[] }>(
  names: readonly Names[],
  build: (parameters: Readonly<Record<Names, string>>) => Query,
): (values: TemplateValues<Names>) => Query {
  const standIn = (name: string): string => `\u0000parameter:${name}\u0000`;
  const nameOf = new Map(names.map((name) => [standIn(name), name]));
  const token = build(Object.fromEntries(names.map((name) => [name, standIn(name)])) as Record<Names, string>);
  const slots = token.values.map((value) => (typeof value === 'string' ? nameOf.get(value) : undefined));
  const constants = token.values;
  const kept = { ...token, sql: sharedText(token.sql) };
  return (values) => ({ ...kept, values: slots.map((name, index) => (name === undefined ? constants[index] : values[name])) });
}

/**
 * One copy of each statement text that templates hold: a template made for each cached key (its
 * guard's values are constants of the template) keeps the text every other key's template has.
 */
const statementTexts = new Map<string, string>();

function sharedText(text: string): string {
  const known = statementTexts.get(text);
  if (known !== undefined) return known;
  statementTexts.set(text, text);
  return text;
}
