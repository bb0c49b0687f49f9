import type { IdentifierSqlToken, QuerySqlToken } from 'slonik';
import { sql } from '../../src/platform/sql.js';

/**
 * `ALTER TABLE … SET STATISTICS 0` for columns that queries only return, never filter, join, group
 * or sort on (wide JSON and text, mostly): the planner has no use for their statistics, and
 * ANALYZE, which a rebuild runs on every table before readers see it (the last step of the
 * rebuild, after the log), spent most of its time on them (the orders table of the 1M-event log:
 * 85 ms, 25 ms without approval_plan, justification and item_json).
 */
export function outputOnlyColumns(table: IdentifierSqlToken, columns: readonly string[]): QuerySqlToken {
  return sql.typeAlias('void')`ALTER TABLE ${table} ${sql.join(
    columns.map((column) => sql.fragment`ALTER COLUMN ${sql.identifier([column])} SET STATISTICS 0`),
    sql.fragment`, `,
  )}`;
}
