import { z } from 'zod';

/**
 * Reads a row whose NULL columns mean "absent": the keys are removed before the row is checked
 * against `schema` (whose optional fields then stay absent, never null), as /v1 requires.
 */
export function withoutNullColumns<Schema extends z.ZodTypeAny>(schema: Schema) {
  return z.preprocess((row) => {
    if (row === null || typeof row !== 'object') return row;
    return Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null && value !== undefined));
  }, schema);
}
