import { StartupError } from '../platform/startupErrors.js';

/** One line for an error that reached the command line: its message, never a stack. */
export function describeError(error: unknown): string {
  // A start-up error's message already says what failed, why and what to change.
  if (error instanceof StartupError) return error.message;
  if (error instanceof AggregateError && error.errors.length > 0) {
    return describeError(error.errors[0]);
  }
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`.replace(/\s*\n\s*/g, ' ');
  }
  return String(error);
}
