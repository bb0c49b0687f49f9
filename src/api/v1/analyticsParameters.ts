import { DateTime } from 'luxon';
import { dayMs, defaultWindow, type DayWindow } from '../../analytics/definitions.js';
import { z } from '../../platform/zodOpenApi.js';
import { invalidRequest } from '../../platform/errors.js';
import { couldExist, maxIdLength } from './parameters.js';

/** A date first: luxon would also read a bare time of day as one on the day of the request. */
const startsWithDate = /^[+-]?\d{4}/;

/**
 * `from`/`to`: any ISO 8601 date or date-time (calendar, ordinal or week date, extended or basic
 * format, any time of day, with `Z` or an offset; without one, UTC), read as the instant it names.
 * `resolveWindow` turns the instants into whole UTC days.
 */
export function windowBoundParameter(which: 'from' | 'to') {
  return z
    .string()
    .max(64)
    .regex(startsWithDate)
    .transform((value, context) => {
      const instant = DateTime.fromISO(value, { zone: 'utc' });
      if (!instant.isValid) {
        context.addIssue({ code: z.ZodIssueCode.custom, message: 'not an ISO 8601 date or date-time' });
        return z.NEVER;
      }
      return instant.toUTC().toISO();
    })
    .optional()
    .openapi({
      description:
        which === 'from'
          ? 'Start of the window: any ISO 8601 date or date-time, for example `2026-10-01`, `2026-10-01T14:30:00+02:00` or `2026-W40-4` (a date-time without an offset is UTC). Figures cover whole UTC days: the window starts at 00:00 UTC of the UTC day that holds this instant. Must be earlier than `to`. Default: 29 days before the UTC day of the request.'
          : 'End of the window (exclusive), in the same forms as `from`. Figures cover whole UTC days: an instant at exactly 00:00 UTC ends the window there; any other instant extends it to the end of its UTC day (the next 00:00 UTC). Default: the day after the UTC day of the request, so that today so far is included.',
      example: which === 'from' ? '2026-10-01' : '2026-11-01T00:00:00Z',
    });
}

/**
 * The window of a request: both bounds default to the 30 UTC days ending with asOf's day; a single
 * bound given keeps the default for the other. `from` must be an earlier instant than `to`. The
 * window is then the smallest run of whole UTC days that covers [from, to): `from` down to the
 * start of its UTC day, `to` up to the next 00:00 UTC unless it is one. A length limit applies to
 * those days.
 */
export function resolveWindow(from: string | undefined, to: string | undefined, asOf: string, maxDays?: number): DayWindow {
  const fallback = defaultWindow(asOf);
  const fromMs = Date.parse(from ?? fallback.from);
  const toMs = Date.parse(to ?? fallback.to);
  if (fromMs >= toMs) throw invalidRequest('window');
  const window = { from: new Date(Math.floor(fromMs / dayMs) * dayMs).toISOString(), to: new Date(Math.ceil(toMs / dayMs) * dayMs).toISOString() };
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
