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

/**
 * A statement built once per read guard (the API makes one guard per cached key) and variant (the
 * filters in use): its text never changes, only the values bound to it. `keyOf` names a variant.
 */
export function statementsByGuard<Variant, Statement>(
  build: (guard: FragmentSqlToken | undefined, variant: Variant) => Statement,
  keyOf: (variant: Variant) => string,
): (guard: FragmentSqlToken | undefined, variant: Variant) => Statement {
  const byGuard = new WeakMap<object, Map<string, Statement>>();
  const unguarded = {};
  return (guard, variant) => {
    let statements = byGuard.get(guard ?? unguarded);
    if (statements === undefined) byGuard.set(guard ?? unguarded, (statements = new Map()));
    const key = keyOf(variant);
    let statement = statements.get(key);
    if (statement === undefined) statements.set(key, (statement = build(guard, variant)));
    return statement;
  };
}
