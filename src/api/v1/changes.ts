import { listBalanceChanges } from '../../../projections/boxes/queries.js';
import { listFulfillmentChanges } from '../../../projections/fulfillments/queries.js';
import { listOrderChanges } from '../../../projections/orders/queries.js';
import { afterLogPosition, feedStart, type ChangeFeedOptions, type ChangeFeedRows, type ChangePosition } from '../../../projections/shared/changeFeed.js';
import { sqlState } from '../../projecting/transientErrors.js';
import { invalidRequest, serviceUnavailable } from '../../platform/errors.js';
import type { RowReader } from '../../platform/projectionReader.js';
import { z } from '../../platform/zodOpenApi.js';
import { JsonText } from '../jsonText.js';
import { maxCursorLength } from '../pagination/cursorCodec.js';
import { fulfillmentListItemSchema } from './fulfillments.js';
import { boxBalanceResponse } from './inventory.js';
import { defineOperation, type OperationContext } from './operation.js';
import { orderListItemSchema } from './orders.js';
import { defaultPageSize, limitParameter, maxPageSize } from './parameters.js';

/** Seconds a client waits before asking a feed again while its read model is rebuilt. */
export const feedUnavailableRetrySeconds = 30;

/**
 * A change position as the text a cursor carries: `tx.seq.id`, the id base64url-encoded (an id
 * may hold any character). The codec signs it with the operation and the workspace.
 */
export const changePosition = {
  encode: ({ tx, seq, id }: ChangePosition): string => `${tx}.${seq}.${Buffer.from(id, 'utf8').toString('base64url')}`,
  decode: (position: string): ChangePosition => {
    const match = /^(\d{1,19})\.(\d{1,19})\.([A-Za-z0-9_-]*)$/.exec(position);
    if (match === null) throw invalidRequest('cursor');
    const [, tx = '', seq = '', id = ''] = match;
    const maxInt8 = 2n ** 63n - 1n;
    if (BigInt(tx) > maxInt8 || BigInt(seq) > maxInt8) throw invalidRequest('cursor');
    return { tx: BigInt(tx), seq: BigInt(seq), id: Buffer.from(id, 'base64url').toString('utf8') };
  },
};

/** SQLSTATE undefined_column: the active generation was built before its read model had change positions. */
const undefinedColumn = '42703';

export type ChangePage = { data: JsonText[]; hasMore: boolean; nextCursor?: string; syncCursor: string };

/**
 * A page of a change feed. `syncCursor` is the cursor to keep: while `hasMore`, the `nextCursor`;
 * on the last page, the read model's checkpoint (every later change comes after it), except that
 * an empty page read from a cursor gives that same cursor back.
 */
export async function changePage(
  context: OperationContext,
  query: { readonly limit?: number; readonly cursor?: string },
  read: (db: RowReader, tenantId: string, options: ChangeFeedOptions) => Promise<ChangeFeedRows>,
): Promise<ChangePage> {
  const limit = query.limit ?? defaultPageSize;
  const scope = { operationId: context.operationId, tenantId: context.principal.tenantId };
  const after = query.cursor === undefined ? feedStart : changePosition.decode(context.cursors.decode(scope, query.cursor));
  const { checkpoint, rows } = await read(context.reads, context.principal.tenantId, { after, limit, guard: context.readGuard }).catch((error: unknown) => {
    if (sqlState(error) === undefinedColumn) throw serviceUnavailable(feedUnavailableRetrySeconds);
    throw error;
  });
  const shown = rows.slice(0, limit);
  const data = shown.map((row) => new JsonText(row.itemJson));
  const last = shown.at(-1);
  if (rows.length > limit && last !== undefined) {
    const nextCursor = context.cursors.encode(scope, changePosition.encode(last.position));
    return { data, hasMore: true, nextCursor, syncCursor: nextCursor };
  }
  if (shown.length === 0 && query.cursor !== undefined) return { data, hasMore: false, syncCursor: query.cursor };
  return { data, hasMore: false, syncCursor: context.cursors.encode(scope, changePosition.encode(afterLogPosition(checkpoint))) };
}

const feedQuery = z.object({
  limit: limitParameter,
  cursor: z
    .string()
    .max(maxCursorLength)
    .optional()
    .openapi({
      description:
        'The `syncCursor` (or, while `hasMore` is true, the `nextCursor`) of an earlier answer of the same operation, copied exactly. Absent: from the beginning, so a first full sync and every later one are the same call. A cursor that cannot be read, was changed, or was issued by another operation answers 400 `common.invalid_request`.',
    }),
});

/** The envelope of a feed: the list envelope and the cursor to keep. */
function feedEnvelope(item: z.ZodTypeAny) {
  return z
    .object({
      data: z.array(item).max(maxPageSize),
      hasMore: z.boolean(),
      nextCursor: z.string().max(maxCursorLength).optional().openapi({ description: 'Present only when `hasMore` is true; equals `syncCursor` then.' }),
      syncCursor: z
        .string()
        .max(maxCursorLength)
        .openapi({
          description:
            'Always present: the cursor to save and send next time, also when `data` is empty. When nothing changed since the cursor sent, it is that same cursor.',
        }),
    })
    .strict();
}

const guarantees = [
  'Each item appears in its current representation (the item of the corresponding list) at the log position of its last change: an item changed several times since the cursor appears once, at its latest position; the order is that of the event log.',
  'Nothing committed after a cursor is missed: the feed reads the read model up to its checkpoint, which the projector moves in the same transaction as the rows, in log order, so every later change lands after the cursor, also while events are appended concurrently.',
  'Cursors are positions in the event log, not in a table: they stay valid when the read model is rebuilt (blue/green replay). While a rebuild of a version that predates change positions serves, the feed answers 503 `common.service_unavailable` with `Retry-After`; retry with the same cursor.',
  'Read with `limit=200` until `hasMore` is false, then save `syncCursor`. When nothing changed, one request answers an empty page and the same cursor. An item may be delivered again (for example after a rebuild or a retry), so process items idempotently.',
  'No filters: a feed filtered by status would lose items that leave the filter. Requests use the budget like any other.',
].join(' ');

export const listOrderChangesOperation = defineOperation({
  operationId: 'listOrderChanges',
  method: 'get',
  path: '/v1/orders/changes',
  tag: 'Orders',
  summary: 'List orders changed since a cursor',
  description: `Change feed of orders: the orders created or changed after \`cursor\`, each as its \`GET /v1/orders\` item. ${guarantees}`,
  scope: 'orders:read',
  query: feedQuery,
  response: feedEnvelope(orderListItemSchema),
  responseName: 'OrderChangeList',
  problems: ['common.invalid_request', 'common.service_unavailable'],
  guardedReads: true,
  handle: async (context, { query }) => changePage(context, query, listOrderChanges),
});

export const listFulfillmentChangesOperation = defineOperation({
  operationId: 'listFulfillmentChanges',
  method: 'get',
  path: '/v1/fulfillments/changes',
  tag: 'Fulfillments',
  summary: 'List delivery records changed since a cursor',
  description: `Change feed of delivery records: those dispatched or changed (status, custody, exceptions, delivery, receipt, closure) after \`cursor\`, each as its \`GET /v1/fulfillments\` item. ${guarantees}`,
  scope: 'fulfillment:read',
  query: feedQuery,
  response: feedEnvelope(fulfillmentListItemSchema),
  responseName: 'FulfillmentChangeList',
  problems: ['common.invalid_request', 'common.service_unavailable'],
  guardedReads: true,
  handle: async (context, { query }) => changePage(context, query, listFulfillmentChanges),
});

export const listBalanceChangesOperation = defineOperation({
  operationId: 'listInventoryBalanceChanges',
  method: 'get',
  path: '/v1/inventory/balances/changes',
  tag: 'Inventory',
  summary: 'List box balances changed since a cursor',
  description: `Change feed of box balances: the boxes registered or changed (a stock movement, a transfer, a status change) after \`cursor\`, each as its \`GET /v1/inventory/balances\` item. ${guarantees}`,
  scope: 'inventory:read',
  query: feedQuery,
  response: feedEnvelope(boxBalanceResponse),
  responseName: 'BoxBalanceChangeList',
  problems: ['common.invalid_request', 'common.service_unavailable'],
  guardedReads: true,
  handle: async (context, { query }) => changePage(context, query, listBalanceChanges),
});
