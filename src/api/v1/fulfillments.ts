import { getFulfillment, listFulfillments } from '../../../projections/fulfillments/queries.js';
import { fulfillmentListItem, fulfillmentResponse } from '../../../projections/fulfillments/schema.js';
import { fulfillmentStatus } from '../../events/index.js';
import { z } from '../../platform/zodOpenApi.js';
import { keysetPage } from '../pagination/page.js';
import { ApiError } from '../problems/apiError.js';
import { defineOperation } from './operation.js';
import { creationPosition, cursorParameter, defaultPageSize, idParameter, limitParameter, listEnvelope, couldExist, maxPageSize } from './parameters.js';

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
  response: listEnvelope(fulfillmentListItem.openapi('FulfillmentListItem'), maxPageSize),
  responseName: 'FulfillmentList',
  problems: ['common.invalid_request'],
  handle: async (context, { query }) => {
    const limit = query.limit ?? defaultPageSize;
    const scope = { operationId: context.operationId, tenantId: context.principal.tenantId };
    const afterSeq = query.cursor === undefined ? undefined : creationPosition.decode(context.cursors.decode(scope, query.cursor));
    const rows = await listFulfillments(context.db, context.principal.tenantId, {
      limit,
      ...(afterSeq === undefined ? {} : { afterSeq }),
      ...(query.status === undefined ? {} : { status: query.status }),
    });
    return keysetPage(rows, limit, { codec: context.cursors, scope, positionOf: (row) => creationPosition.encode(row.seq), itemOf: (row) => row.item });
  },
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
  handle: async (context, { params }) => {
    const fulfillment = !couldExist(params.orderId) ? undefined : await getFulfillment(context.db, context.principal.tenantId, params.orderId);
    if (fulfillment === undefined) throw new ApiError('common.not_found');
    return fulfillment;
  },
});
