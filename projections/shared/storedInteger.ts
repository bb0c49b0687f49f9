import { z } from '../../src/platform/zodOpenApi.js';

/**
 * An int8 column as /v1 sends it: JSON carries a number, and the value must stay exact. Queries
 * read such a column as `column::float8`: every int8 within ±(2^53 - 1) is exact in float8, and
 * anything beyond becomes at least 2^53 in size and fails these bounds, so it is an error, never a
 * rounded number. (A cast rather than reading a bigint and converting it in zod: an effect per
 * value was most of the cost of a 200-row page.)
 */
export const storedInteger = z
  .number()
  .int()
  .min(Number.MIN_SAFE_INTEGER, 'integer beyond a safe JSON number')
  .max(Number.MAX_SAFE_INTEGER, 'integer beyond a safe JSON number')
  .openapi({ format: 'int64' });
