import type { ValueExpression } from 'slonik';
import { sql } from '../../src/platform/sql.js';

/** A value of a recordset row: what JSON carries and json_to_recordset casts to the column's type. */
export type RecordsetValue = string | number | boolean | null | readonly string[];

/**
 * The rows of a batch's write as one json parameter, which `json_to_recordset(…) AS x(column
 * type, …)` reads back as rows: the native JSON.stringify instead of an array parameter a column
 * (sql.unnest), which pg serialises value by value in JavaScript, escaping each one (the costliest
 * step of a rebuild's writes). Keep the keys short: they travel once a row.
 */
export function recordset(rows: readonly Readonly<Record<string, RecordsetValue>>[]): ValueExpression {
  return sql.fragment`${JSON.stringify(rows)}::json`;
}
