import { DateTime } from 'luxon';
import { dayMs, defaultWindow, type DayWindow } from '../../analytics/definitions.js';
import { z } from '../../platform/zodOpenApi.js';
import { invalidRequest } from '../../platform/errors.js';
import { couldExist, maxIdLength } from './parameters.js';

const hours = '(?:[01]\\d|2[0-3])';
const minutes = '[0-5]\\d';
const fraction = '(?:[.,]\\d{1,9})?';
const zone = `(?:[Zz]|[+-]${hours}(?::?${minutes})?)?`;
/** Extended format: 2026-10-01, 2026-W40-4, 2026-274, each optionally with T14:30[:00[.000]] and Z or an offset. */
const extendedForm = `\\d{4}-(?:\\d{2}-\\d{2}|W\\d{2}-\\d|\\d{3})(?:[Tt]${hours}:${minutes}(?::${minutes}${fraction})?${zone})?`;
/** Basic format: 20261001, 2026W404, 2026274, each optionally with T1430[00[.000]] and Z or an offset. */
const basicForm = `\\d{4}(?:\\d{4}|W\\d{3}|\\d{3})(?:[Tt]${hours}${minutes}(?:${minutes}${fraction})?${zone})?`;

/**
 * The forms `from` and `to` accept, and no others: ISO 8601 complete dates (calendar, week or
 * ordinal; extended or basic format, not mixed), optionally with a time of day of at least hours
 * and minutes and `Z` or an offset (without one, UTC). Reduced precision (`2026`, `2026-10`,
 * `2026-W40`), hour-only times, `24:00`, expanded years and leap seconds are not dates here.
 * Recorded as the parameters' `pattern`; the calendar itself (30 February, week 53) is luxon's.
 */
export const windowBoundPattern = `^(?:${extendedForm}|${basicForm})$`;
const windowBoundForm = new RegExp(windowBoundPattern);

/** The instant a `from`/`to` value names (ISO 8601 text in UTC), or undefined when it is not one of the accepted forms. */
export function windowBoundInstant(value: string): string | undefined {
  if (value.length > 64 || !windowBoundForm.test(value)) return undefined;
  const instant = DateTime.fromISO(value, { zone: 'utc' });
  return instant.isValid ? (instant.toUTC().toISO() ?? undefined) : undefined;
}

/**
 * `from`/`to` (see `windowBoundPattern`), read as the instant they name; `resolveWindow` turns
 * the instants into whole UTC days. A value that would be valid with a `+` where it has a space
 * (an offset's `+` sent unescaped, which a query string reads as a space) gets the `%2B` hint.
 */
export function windowBoundParameter(which: 'from' | 'to') {
  return z
    .string()
    .max(64)
    .transform((value, context) => {
      const instant = windowBoundInstant(value);
      if (instant !== undefined) return instant;
      const unescapedPlus = value.includes(' ') && windowBoundInstant(value.replaceAll(' ', '+')) !== undefined;
      context.addIssue({ code: z.ZodIssueCode.custom, message: 'not an accepted ISO 8601 date or date-time', params: { cause: unescapedPlus ? 'date_plus' : 'date' } });
      return z.NEVER;
    })
    .optional()
    .openapi({
      pattern: windowBoundPattern,
      description:
        (which === 'from'
          ? 'Start of the window: an instant. Figures cover whole UTC days: the window starts at 00:00 UTC of the UTC day that holds this instant. Must be earlier than `to`. Default: 29 days before the UTC day of the request.'
          : 'End of the window (exclusive): an instant. Figures cover whole UTC days: an instant at exactly 00:00 UTC ends the window there; any other instant extends it to the end of its UTC day (the next 00:00 UTC). Default: the day after the UTC day of the request, so that today so far is included.') +
        ' Accepted forms (ISO 8601): a calendar date `2026-10-01`, a week date `2026-W40-4` or an ordinal date `2026-274`, in extended format or in basic format (`20261001`, `2026W404`, `2026274`), optionally followed by `T` and a time of day with hours and minutes, optionally seconds and a fraction (`T14:30`, `T14:30:00.500`; basic `T1430`, `T143000`), and `Z` or an offset (`+02:00`, `+0200`, `+02`). Without `Z` or an offset the time is UTC; a date alone is 00:00 UTC. Write the `+` of an offset as `%2B` in a query string (an unescaped `+` reads as a space). Not accepted: reduced precision (`2026`, `2026-10`, `2026-W40`), a time of hours alone, `24:00`, leap seconds, expanded years, and extended and basic format mixed in one value. The whole UTC days of the window must lie between `0001-01-01T00:00:00Z` and `9999-12-31T00:00:00Z` (its end); outside, 400 `common.invalid_request`.',
      example: which === 'from' ? '2026-10-01' : '2026-11-01T00:00:00Z',
    });
}

/**
 * The instants a window may cover: its days lie in the years 0001 to 9999. Before, Postgres has no
 * year 0 (`0000-12-31` is out of its range); after, the window's end would be a year of five
 * digits, which no timestamp of the contract (ISO 8601 without an expanded year) can write.
 */
export const windowRange = { from: '0001-01-01T00:00:00.000Z', to: '9999-12-31T00:00:00.000Z' } as const;

/**
 * The window of a request: both bounds default to the 30 UTC days ending with asOf's day; a single
 * bound given keeps the default for the other. `from` must be an earlier instant than `to`. The
 * window is then the smallest run of whole UTC days that covers [from, to): `from` down to the
 * start of its UTC day, `to` up to the next 00:00 UTC unless it is one. Those days must lie within
 * `windowRange`, and a length limit applies to them.
 */
export function resolveWindow(from: string | undefined, to: string | undefined, asOf: string, maxDays?: number): DayWindow {
  const fallback = defaultWindow(asOf);
  const fromMs = Date.parse(from ?? fallback.from);
  const toMs = Date.parse(to ?? fallback.to);
  if (fromMs >= toMs) throw invalidRequest('window');
  const start = Math.floor(fromMs / dayMs) * dayMs;
  const end = Math.ceil(toMs / dayMs) * dayMs;
  if (!(start >= Date.parse(windowRange.from) && end <= Date.parse(windowRange.to))) throw invalidRequest('window_range');
  const window = { from: new Date(start).toISOString(), to: new Date(end).toISOString() };
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
