import { z } from '../../src/platform/zodOpenApi.js';

/**
 * An int8 column as /v1 sends it: the pool reads int8 as a bigint, JSON carries a number, and the
 * value must stay exact (a quantity or an amount beyond 2^53 is an error, never rounded).
 */
export const storedInteger = z
  .bigint()
  // Checks, not a refine: one zod effect per value is already most of a 200-row page's cost.
  .min(BigInt(Number.MIN_SAFE_INTEGER), 'integer beyond a safe JSON number')
  .max(BigInt(Number.MAX_SAFE_INTEGER), 'integer beyond a safe JSON number')
  .transform(Number)
  .openapi({ type: 'integer', format: 'int64', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
