import { getFulfillment, listFulfillments } from '../../../projections/fulfillments/queries.js';
import { fulfillmentListItem, fulfillmentResponse } from '../../../projections/fulfillments/schema.js';
import { fulfillmentStatus } from '../../events/index.js';
import { z } from '../../platform/zodOpenApi.js';
import { defineOperation } from './operation.js';
import { cursorParameter, idParameter, limitParameter, listEnvelope, maxPageSize } from './parameters.js';
import { creationOrderedPage, foundOr404 } from './reads.js';

export const fulfillmentListItemSchema = fulfillmentListItem.openapi('FulfillmentListItem');

export const listFulfillmentsOperation = defineOperation({
  operationId: 'listFulfillments',
  method: 'get',
  path: '/v1/fulfillments',
  tag: 'Fulfillments',
  summary: 'List delivery records',
  description:
    'Delivery records (fulfillments) of the workspace, oldest first by creation (dispatch), paginated; new records appear at the end. Poll with `status` and compare `status` and `updatedAt` to follow delivery progress.',
  scope: 'fulfillment:read',
  query: z.object({
    limit: limitParameter,
    cursor: cursorParameter,
    status: fulfillmentStatus.optional().openapi({ description: 'Only delivery records currently in this status.' }),
  }),
  response: listEnvelope(fulfillmentListItemSchema, maxPageSize),
  responseName: 'FulfillmentList',
  problems: ['common.invalid_request'],
  handle: async (context, { query }) =>
    creationOrderedPage(
      context,
      query,
      (page) => listFulfillments(context.db, context.principal.tenantId, { ...page, ...(query.status === undefined ? {} : { status: query.status }) }),
      (row) => row.item,
    ),
});

export const getFulfillmentOperation = defineOperation({
  operationId: 'getFulfillment',
  method: 'get',
  path: '/v1/fulfillments/{orderId}',
  tag: 'Fulfillments',
  summary: 'Get the custody history of one order',
  description:
    'The delivery record of one order: custody `movements` oldest first, delivery `exceptions`, and `delivery`, `receipt` and `closure` once they exist. 404 `common.not_found` when the order does not exist or has no delivery record yet.',
  scope: 'fulfillment:read',
  params: z.object({ orderId: idParameter('Order id of the delivery.') }),
  response: fulfillmentResponse.openapi('Fulfillment'),
  responseName: 'Fulfillment',
  problems: ['common.not_found'],
  handle: async (context, { params }) =>
    foundOr404(params.orderId, 'common.not_found', (orderId) => getFulfillment(context.db, context.principal.tenantId, orderId)),
});
