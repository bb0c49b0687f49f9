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

/**
 * Text bounds of the event contract. Every event is checked against its schema before it is
 * projected, so /v1 can promise these bounds (an event beyond one is refused as poison, never
 * stored); the OpenAPI document states them.
 */
/** Names people read: workspace, member, clinic, warehouse, category, item. */
export const name = z.string().min(1).max(200);
/** Codes and references of other systems: SKU, box code, lot, serial, reason codes, keys, stages. */
export const code = z.string().min(1).max(100);
/** Free text people write: justification, descriptions, comments, reasons, packaging. */
export const text = z.string().max(2000);

/** Most lines an order (and so its receipt) can have. */
export const maxOrderLines = 200;
/** Most serial numbers one box can carry. */
export const maxSerialsPerBox = 1000;
/** Most steps an approval plan can have. */
export const maxApprovalSteps = 10;
