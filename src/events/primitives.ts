import { z } from 'zod';

/** Ids are opaque strings: compared as strings, never parsed. */
export const id = z.string().min(1).max(128);
export const isoTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO 8601 UTC with milliseconds and Z');
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'ISO 8601 calendar date');
export const currency = z.string().regex(/^[A-Z]{3}$/, 'ISO 4217 code');
export const minorUnits = z.number().int();
export const quantity = z.number().int();
export const positiveQuantity = z.number().int().positive();
