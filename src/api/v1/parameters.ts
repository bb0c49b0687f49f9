import { z } from '../../platform/zodOpenApi.js';
import { invalidRequest } from '../../platform/errors.js';
import { maxCursorLength } from '../pagination/cursorCodec.js';

export const defaultPageSize = 50;
export const maxPageSize = 200;
/** Ids are opaque; none is longer than this, so a longer one is simply not found. */
export const maxIdLength = 200;

/**
 * Whether an id sent by a client could name a stored record: ids are at most 200 characters and,
 * being Postgres text, never hold a NUL. Anything else is simply not found, without a query.
 */
export function couldExist(id: string): boolean {
  return id.length <= maxIdLength && !id.includes('\u0000');
}

/** `limit`: digits only (leading zeros allowed), 1 to 200; absent means 50. */
export const limitParameter = z
  .string()
  .regex(/^\d+$/)
  .transform(Number)
  .pipe(z.number().int().min(1).max(maxPageSize))
  .optional()
  .openapi({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: maxPageSize,
    // The document describes the parsed integer; the metadata is typed by the raw (string) input.
    default: defaultPageSize as never,
    description: `Page size: a whole number from 1 to ${maxPageSize} written with digits only (default ${defaultPageSize}).`,
  });

export const cursorParameter = z
  .string()
  .max(maxCursorLength)
  .optional()
  .openapi({
    description:
      'The `nextCursor` of the previous page of the same operation, copied exactly. It marks a position only: send the filters again on every page. A cursor that cannot be read, was changed, or was issued by another operation answers 400 `common.invalid_request`.',
  });

/** A path id: any string; an id this service never issued answers 404. */
export function idParameter(description: string) {
  return z.string().openapi({ description: `${description} Opaque; compare as a string. Ids longer than ${maxIdLength} characters never exist.`, maxLength: maxIdLength });
}

/** A filter id: any string; one that matches nothing gives an empty page. */
export function filterIdParameter(description: string) {
  return z
    .string()
    .optional()
    .openapi({ description: `${description} Ids longer than ${maxIdLength} characters never exist, so they give an empty page.`, maxLength: maxIdLength });
}

/** The list envelope of every list: `nextCursor` only while `hasMore` is true. */
export function listEnvelope(item: z.ZodTypeAny, maxItems?: number) {
  return z
    .object({
      data: maxItems === undefined ? z.array(item) : z.array(item).max(maxItems),
      hasMore: z.boolean(),
      nextCursor: z.string().max(maxCursorLength).optional().openapi({ description: 'Present only when `hasMore` is true.' }),
    })
    .strict();
}

/** A creation-sequence position (orders, fulfillments) as the text a cursor carries. */
export const creationPosition = {
  encode: (seq: bigint): string => seq.toString(),
  decode: (position: string): bigint => {
    if (!/^\d{1,19}$/.test(position)) throw invalidRequest('cursor');
    return BigInt(position);
  },
};
