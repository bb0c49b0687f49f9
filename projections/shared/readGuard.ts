import type { FragmentSqlToken } from 'slonik';
import { sql } from '../../src/platform/sql.js';

/**
 * A read may carry a guard: a condition that must hold for the statement to read at all (the API
 * passes the check that its caller may still read, so that check and read are one statement).
 * It goes after the tenant predicate of the statement's WHERE clause.
 */
export type ReadGuard = { readonly guard?: FragmentSqlToken | undefined };

export function guardCondition(guard: FragmentSqlToken | undefined): FragmentSqlToken {
  return guard === undefined ? sql.fragment`` : sql.fragment`AND ${guard}`;
}
