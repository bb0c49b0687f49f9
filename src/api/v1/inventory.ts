import { getBox, getBoxBalance, listBalances } from '../../../projections/boxes/queries.js';
import { boxBalanceRow, boxRow } from '../../../projections/boxes/schema.js';
import { listBoxMovements } from '../../../projections/stockMovements/queries.js';
import { stockMovementRow } from '../../../projections/stockMovements/schema.js';
import { z } from '../../platform/zodOpenApi.js';
import { JsonText } from '../jsonText.js';
import { keysetPage, terminalPage } from '../pagination/page.js';
import { defineOperation, type OperationContext } from './operation.js';
import { couldExist, cursorParameter, defaultPageSize, filterIdParameter, idParameter, limitParameter, listEnvelope, maxPageSize } from './parameters.js';
import { confirmAccess, foundOr404 } from './reads.js';

export const boxBalanceResponse = boxBalanceRow.strict().openapi('BoxBalance', {
  description: 'Quantities of one box in the unit of its item: `available` = `onHand` - `reserved`.',
});

const boxResponse = boxRow.strict().openapi('Box', {
  description:
    'One stock box: its printed `code`, item, current warehouse, status, lot, serials as registered, expiry date (`expiresOn`, a calendar date) and origin. `lot`, `serials` and `expiresOn` are present only when recorded.',
});

const movementResponse = stockMovementRow.strict().openapi('StockMovement', {
  description: 'One entry of the append-only ledger of a box. Optional fields are present only when recorded.',
});

const boxIdParams = z.object({ boxId: idParameter('Box id (not the printed code).') });

export const listBalancesOperation = defineOperation({
  operationId: 'listInventoryBalances',
  method: 'get',
  path: '/v1/inventory/balances',
  tag: 'Inventory',
  summary: 'List box balances',
  description:
    'Quantities of every box of the workspace, ordered by box id ascending (byte order), paginated. `catalogItemId` and `warehouseId` narrow the list; one that matches nothing gives an empty page. Filters are not kept in the cursor: send them again on every page.',
  scope: 'inventory:read',
  query: z.object({
    limit: limitParameter,
    cursor: cursorParameter,
    catalogItemId: filterIdParameter('Only boxes of this catalog item.'),
    warehouseId: filterIdParameter('Only boxes currently in this warehouse.'),
  }),
  response: listEnvelope(boxBalanceResponse, maxPageSize),
  responseName: 'BoxBalanceList',
  problems: ['common.invalid_request'],
  guardedReads: true,
  handle: async (context, { query }) => {
    const limit = query.limit ?? defaultPageSize;
    const scope = { operationId: context.operationId, tenantId: context.principal.tenantId };
    const afterBoxId = query.cursor === undefined ? undefined : context.cursors.decode(scope, query.cursor);
    const tooLong = (id: string | undefined) => id !== undefined && !couldExist(id);
    const rows =
      tooLong(query.catalogItemId) || tooLong(query.warehouseId)
        ? await confirmAccess(context).then(() => [])
        : await listBalances(context.reads, context.principal.tenantId, {
            limit,
            guard: context.readGuard,
            ...(afterBoxId === undefined ? {} : { afterBoxId }),
            ...(query.catalogItemId === undefined ? {} : { catalogItemId: query.catalogItemId }),
            ...(query.warehouseId === undefined ? {} : { warehouseId: query.warehouseId }),
          });
    // Each balance is sent as the JSON text the read model stores.
    return keysetPage(rows, limit, { codec: context.cursors, scope, positionOf: (row) => row.boxId, itemOf: (row) => new JsonText(row.balance) });
  },
});

const boxOr404 = <T>(context: OperationContext, boxId: string, read: (tenantId: string, boxId: string) => Promise<T | undefined>): Promise<T> =>
  foundOr404(boxId, 'inventory.box_not_found', (id) => read(context.principal.tenantId, id));

export const getBoxOperation = defineOperation({
  operationId: 'getInventoryBox',
  method: 'get',
  path: '/v1/inventory/boxes/{boxId}',
  tag: 'Inventory',
  summary: 'Get one box',
  description: 'One stock box of the workspace by its id (not its printed code).',
  scope: 'inventory:read',
  params: boxIdParams,
  response: boxResponse,
  responseName: 'Box',
  problems: ['inventory.box_not_found'],
  handle: async (context, { params }) => boxOr404(context, params.boxId, (tenantId, boxId) => getBox(context.db, tenantId, boxId)),
});

export const getBoxBalanceOperation = defineOperation({
  operationId: 'getInventoryBoxBalance',
  method: 'get',
  path: '/v1/inventory/boxes/{boxId}/balance',
  tag: 'Inventory',
  summary: 'Get the quantities of one box',
  description: 'The current `onHand`, `reserved` and `available` of one box, with its item and warehouse.',
  scope: 'inventory:read',
  params: boxIdParams,
  response: boxBalanceResponse,
  responseName: 'BoxBalance',
  problems: ['inventory.box_not_found'],
  handle: async (context, { params }) => boxOr404(context, params.boxId, (tenantId, boxId) => getBoxBalance(context.db, tenantId, boxId)),
});

export const listBoxMovementsOperation = defineOperation({
  operationId: 'listInventoryBoxMovements',
  method: 'get',
  path: '/v1/inventory/boxes/{boxId}/movements',
  tag: 'Inventory',
  summary: 'List the ledger movements of one box',
  description: 'Every movement of the box, oldest first by `occurredAt` (ties in the order they were recorded); one terminal page.',
  scope: 'inventory:read',
  params: boxIdParams,
  response: listEnvelope(movementResponse),
  responseName: 'StockMovementList',
  problems: ['inventory.box_not_found'],
  handle: async (context, { params }) => {
    const movements = !couldExist(params.boxId) ? [] : await listBoxMovements(context.db, context.principal.tenantId, params.boxId);
    // A box's ledger starts with its receipt, so an empty ledger almost always means no such box.
    if (movements.length === 0) await boxOr404(context, params.boxId, (tenantId, boxId) => getBoxBalance(context.db, tenantId, boxId));
    return terminalPage(movements);
  },
});
