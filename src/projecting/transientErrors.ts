import {
  BackendTerminatedError,
  BackendTerminatedUnexpectedlyError,
  ConnectionError,
  IdleTransactionTimeoutError,
  StatementTimeoutError,
} from 'slonik';

/**
 * Errors that say nothing about the events: the database went away, was shut down, ran out of
 * resources, or aborted the transaction to break a deadlock or serialisation conflict. The batch
 * is retried as a whole; anything else is the event's fault and isolates it.
 */
const transientSqlStates = /^(08|53|57P|58|40001|40P01)/;

export function isTransientDatabaseError(error: unknown): boolean {
  if (
    error instanceof ConnectionError ||
    error instanceof BackendTerminatedError ||
    error instanceof BackendTerminatedUnexpectedlyError ||
    error instanceof IdleTransactionTimeoutError ||
    error instanceof StatementTimeoutError
  ) {
    return true;
  }
  const code = sqlState(error);
  return code !== undefined && transientSqlStates.test(code);
}

/** The SQLSTATE of a database error, wrapped (slonik) or not (pg), or undefined. */
export function sqlState(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
