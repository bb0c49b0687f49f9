import { getOrder, listOrders } from '../../../projections/orders/queries.js';
import { orderApprovalPlanResponse, orderLineResponse, orderListItem, orderResponse } from '../../../projections/orders/schema.js';
import { orderStatus } from '../../events/index.js';
import { z } from '../../platform/zodOpenApi.js';
import { JsonText } from '../jsonText.js';
import { defineOperation } from './operation.js';
import { cursorParameter, idParameter, limitParameter, listEnvelope, maxPageSize } from './parameters.js';
import { creationOrderedPage, foundOr404 } from './reads.js';

orderLineResponse.openapi('OrderLine', {
  description: 'A line of an order. `unitCost` and `currency` appear only for a key holding `catalog.cost:read`. No additional properties.',
});
orderApprovalPlanResponse.openapi('OrderApprovalPlan', {
  description: 'The approval plan of an order. The value it was evaluated on is never returned. No additional properties.',
});

const orderSchema = orderResponse.openapi('Order', {
  description:
    'One order with its lines and approval plan. Order value, its currency and the patient reference are never returned on /v1. `version` grows every time the status changes. No additional properties.',
});

export const orderListItemSchema = orderListItem.openapi('OrderListItem');

export const listOrdersOperation = defineOperation({
  operationId: 'listOrders',
  method: 'get',
  path: '/v1/orders',
  tag: 'Orders',
  summary: 'List orders',
  description:
    'Orders of the workspace, oldest first by creation, paginated. New orders appear at the end: read every page to see them. `status` narrows the list and is evaluated on each request, so an order whose status changes may leave the filter before it is reached.',
  scope: 'orders:read',
  query: z.object({
    limit: limitParameter,
    cursor: cursorParameter,
    status: orderStatus.optional().openapi({ description: 'Only orders currently in this status.' }),
  }),
  response: listEnvelope(orderListItemSchema, maxPageSize),
  responseName: 'OrderList',
  problems: ['common.invalid_request'],
  guardedReads: true,
  handle: async (context, { query }) =>
    creationOrderedPage(
      context,
      query,
      (page) =>
        listOrders(context.reads, context.principal.tenantId, {
          ...page,
          ...(query.status === undefined ? {} : { status: query.status }),
          guard: context.readGuard,
        }),
      // Each order is sent as the JSON text the read model stores.
      (row) => new JsonText(row.itemJson),
    ),
});

export const getOrderOperation = defineOperation({
  operationId: 'getOrder',
  method: 'get',
  path: '/v1/orders/{orderId}',
  tag: 'Orders',
  summary: 'Get one order',
  description: 'One order of the workspace by its id (not its number), with lines and approval plan.',
  scope: 'orders:read',
  params: z.object({ orderId: idParameter('Order id (not the order number).') }),
  response: orderSchema,
  responseName: 'Order',
  problems: ['orders.not_found'],
  guardedReads: true,
  handle: async (context, { params }) =>
    foundOr404(params.orderId, 'orders.not_found', (orderId) =>
      getOrder(context.reads, context.principal.tenantId, orderId, {
        includeCost: context.principal.scopes.includes('catalog.cost:read'),
        guard: context.readGuard,
      }),
    ),
});
