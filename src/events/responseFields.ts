import { currency, id, isoDate, isoTimestamp } from './primitives.js';
import { z } from '../platform/zodOpenApi.js';

/**
 * Field shapes of /v1 answers whose bounds are true by construction, so the OpenAPI document can
 * state them: the event contract bounds every value a read model or an analytics figure holds
 * (hence here, below both). Rows are checked against these schemas when they are read (the result parser), so a
 * value outside a bound is an error, never sent.
 */

/**
 * An id as the events carry it: 1 to 128 characters. Every event is checked against its schema
 * before it is projected, so no stored id is longer.
 */
export const storedId = id;

/**
 * A timestamp as /v1 sends it: ISO 8601 UTC with milliseconds and `Z` (24 characters). Every
 * stored time comes from an event time (a four-digit year) or the clock.
 */
export const responseTimestamp = isoTimestamp.max(24).openapi({ format: 'date-time' });

/** A calendar date `YYYY-MM-DD`. */
export const responseDate = isoDate.max(10).openapi({ format: 'date' });

/** An ISO 4217 currency code (three capital letters), as the events carry it. */
export const currencyCode = currency.max(3);

/** The largest `integer` column value (int4). */
export const maxInt32 = 2_147_483_647;

/** A value of an int4 column: the column itself bounds it. */
export function int32Column(minimum: number) {
  return z.number().int().min(minimum).max(maxInt32).openapi({ format: 'int32' });
}

/**
 * An integer that travels through JSON (a jsonb document or a JSON-built column). A JSON number
 * is exact only within ±(2^53 - 1); beyond that it is an error when read, never rounded (as
 * `storedInteger` does for int8 columns).
 */
export function jsonInteger(minimum: number = Number.MIN_SAFE_INTEGER) {
  return z.number().int().min(minimum).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64' });
}
