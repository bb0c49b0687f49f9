import { z } from 'zod';
import { sql } from '../../platform/sql.js';
import { keysetPage, type ListPage } from '../pagination/page.js';
import { ApiError, type ProblemCode } from '../../platform/errors.js';
import type { OperationContext } from './operation.js';
import { couldExist, creationPosition, defaultPageSize } from './parameters.js';

/** The record a path id names, or the operation's 404; an id that could not exist is not looked up. */
export async function foundOr404<T>(id: string, notFound: ProblemCode, read: (id: string) => Promise<T | undefined>): Promise<T> {
  const found = couldExist(id) ? await read(id) : undefined;
  if (found === undefined) throw new ApiError(notFound);
  return found;
}

/**
 * A page of a list ordered by per-tenant creation sequence (orders, fulfillments): the cursor holds
 * the sequence of the last record shown, so records created meanwhile come at the end. `itemOf`
 * makes the answer's item of a row.
 */
export async function creationOrderedPage<Row extends { readonly seq: bigint }, Item>(
  context: OperationContext,
  query: { readonly limit?: number; readonly cursor?: string },
  list: (page: { afterSeq?: bigint; limit: number }) => Promise<readonly Row[]>,
  itemOf: (row: Row) => Item,
): Promise<ListPage<Item>> {
  const limit = query.limit ?? defaultPageSize;
  const scope = { operationId: context.operationId, tenantId: context.principal.tenantId };
  const afterSeq = query.cursor === undefined ? undefined : creationPosition.decode(context.cursors.decode(scope, query.cursor));
  const rows = await list({ limit, ...(afterSeq === undefined ? {} : { afterSeq }) });
  return keysetPage(rows, limit, { codec: context.cursors, scope, positionOf: (row) => creationPosition.encode(row.seq), itemOf });
}

const allowedRow = z.object({ allowed: z.boolean() });

/**
 * For an operation with guarded reads that answers without reading (its filter cannot match
 * anything): the check its read statement would have carried, alone.
 */
export async function confirmAccess(context: OperationContext): Promise<void> {
  if (context.readGuard === undefined) return;
  await context.reads.rows(sql.type(allowedRow)`SELECT ${context.readGuard} AS allowed`);
}
