import { dayMs, defaultWindow, type DayWindow } from '../../analytics/definitions.js';
import { z } from '../../platform/zodOpenApi.js';
import { invalidRequest } from '../problems/apiError.js';
import { couldExist, maxIdLength } from './parameters.js';

const dateForm = /^(\d{4})-(\d{2})-(\d{2})(?:T00:00(?::00(?:\.0{1,3})?)?(?:Z|[+-]00:?00))?$/;

/**
 * `from`/`to`: an ISO 8601 UTC date, or a date-time at 00:00 UTC. Analytics aggregate whole UTC
 * days, so a time inside a day would be silently rounded; it is refused instead.
 */
export function windowBoundParameter(which: 'from' | 'to') {
  return z
    .string()
    .max(40)
    .regex(dateForm)
    .refine((value) => isCalendarDate(value))
    .transform((value) => `${value.slice(0, 10)}T00:00:00.000Z`)
    .optional()
    .openapi({
      description:
        which === 'from'
          ? 'First UTC day of the window (inclusive): `YYYY-MM-DD`, or a date-time at 00:00 UTC such as `2026-11-01T00:00:00Z`. Must be earlier than `to`. Default: 29 days before the UTC day of the request.'
          : 'End of the window (exclusive): the UTC day after the last day included, in the same forms as `from`. Default: the day after the UTC day of the request, so that today so far is included.',
      example: which === 'from' ? '2026-10-01' : '2026-11-01',
    });
}

function isCalendarDate(value: string): boolean {
  const day = value.slice(0, 10);
  const parsed = new Date(`${day}T00:00:00.000Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === day;
}

/**
 * The window of a request: both bounds default to the 30 UTC days ending with asOf's day; a single
 * bound given keeps the default for the other. `from` must be earlier than `to`.
 */
export function resolveWindow(from: string | undefined, to: string | undefined, asOf: string, maxDays?: number): DayWindow {
  const fallback = defaultWindow(asOf);
  const window = { from: from ?? fallback.from, to: to ?? fallback.to };
  if (Date.parse(window.from) >= Date.parse(window.to)) throw invalidRequest('window');
  if (maxDays !== undefined && Date.parse(window.to) - Date.parse(window.from) > maxDays * dayMs) throw invalidRequest('window_length');
  return window;
}

/** `catalogItemId` of the exceptions report: ids hold no NUL and are at most 200 characters. */
export const exceptionItemFilter = z
  .string()
  .refine(couldExist)
  .optional()
  .openapi({
    description: `Narrows the report to the stock exceptions of one catalog item: every LOW_STOCK and EXPIRING_STOCK exception of that item is listed, whatever it drills down to (the item, or a box of it), in the order of the full report, and no stock exception of another item. Exceptions of the other kinds (delivery exceptions, receipt discrepancies, pending approvals) are about orders, not one item's stock, and are left out; read the report without the filter for them. An id that matches nothing gives an empty list. At most ${maxIdLength} characters.`,
    maxLength: maxIdLength,
  });
