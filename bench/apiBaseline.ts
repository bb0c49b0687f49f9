import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';

/**
 * The yardstick of `npm run bench -- api`, run as a child process of its own:
 *
 *   DATABASE_URL=postgres://… BENCH_TENANT_ID=… node bin/run-ts.js bench/apiBaseline.ts --port N
 *
 * A bare node:http server answering the three URLs the bench loads with the SELECT text the read
 * model queries run (copied from projections/orders/queries.ts listOrders and getOrder with cost,
 * projections/boxes/queries.ts listBalances; parameterised, unnamed statements like the API's) on a
 * pg.Pool of the API's size (10), serialised with JSON.stringify in the API's envelope. No key, no
 * budget, no validation, no logging, no cursor signing: what is left is the floor of "HTTP in,
 * one query, JSON out" on this machine. The tenant is fixed by BENCH_TENANT_ID.
 */

const listOrdersSql = `
    SELECT creation_seq AS seq, order_id AS "orderId", number, type, status, requester_id AS "requesterId",
      clinic_id AS "clinicId", destination_warehouse_id AS "destinationWarehouseId", version
    FROM read_models.orders
    WHERE tenant_id = $1
      AND creation_seq > $2
    ORDER BY creation_seq
    LIMIT $3
  `;

// getOrder with includeCost (the bench key holds catalog.cost:read).
const getOrderSql = `
    SELECT o.order_id AS "orderId", o.number, o.type, o.status, o.requester_id AS "requesterId", o.clinic_id AS "clinicId",
      o.destination_warehouse_id AS "destinationWarehouseId", o.preferred_source_warehouse_id AS "preferredSourceWarehouseId",
      o.justification,
      coalesce((
        SELECT jsonb_agg(
          jsonb_strip_nulls(jsonb_build_object(
            'lineId', l.line_id, 'catalogItemId', l.catalog_item_id, 'sku', l.sku, 'name', l.name,
            'requestedQty', l.requested_qty, 'unitOfMeasure', l.unit_of_measure, 'category', l.category_id,
            'highValue', l.high_value, 'unitCost', l.unit_cost, 'currency', l.currency
          ))
          ORDER BY l.line_no
        )
        FROM read_models.order_lines AS l
        WHERE l.tenant_id = $1 AND l.order_id = o.order_id
      ), '[]'::jsonb) AS lines,
      o.approval_plan AS "approvalPlan", o.version
    FROM read_models.orders AS o
    WHERE o.tenant_id = $2 AND o.order_id = $3
  `;

const listBalancesSql = `
    SELECT box_id AS "boxId", catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId",
      on_hand AS "onHand", reserved, on_hand - reserved AS available
    FROM read_models.boxes
    WHERE tenant_id = $1
    ORDER BY box_id
    LIMIT $2
  `;

const { values } = parseArgs({ options: { port: { type: 'string' } } });
const port = Number(values.port);
const connectionString = process.env.DATABASE_URL;
const tenantId = process.env.BENCH_TENANT_ID;
if (!Number.isInteger(port) || port < 1 || connectionString === undefined || tenantId === undefined) {
  process.stderr.write('usage: DATABASE_URL=… BENCH_TENANT_ID=… node bin/run-ts.js bench/apiBaseline.ts --port N\n');
  process.exit(2);
}

// int8 as a JSON number, as the API sends it (the API also checks the safe range; these are small).
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
const pool = new pg.Pool({ connectionString, max: 10 });

type Row = Record<string, unknown>;

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** limit+1 rows fetched: the extra one only says that another page exists (no MAC on the cursor). */
function page(rows: readonly Row[], limit: number, positionOf: (row: Row) => unknown, itemOf: (row: Row) => Row) {
  const shown = rows.slice(0, limit);
  const data = shown.map(itemOf);
  const last = shown.at(-1);
  if (rows.length <= limit || last === undefined) return { data, hasMore: false };
  const nextCursor = Buffer.from(JSON.stringify({ v: 1, p: String(positionOf(last)) })).toString('base64url');
  return { data, hasMore: true, nextCursor };
}

function limitOf(search: URLSearchParams): number {
  const limit = Number(search.get('limit') ?? 50);
  return Number.isInteger(limit) && limit >= 1 && limit <= 200 ? limit : 50;
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://baseline');
  const path = url.pathname;
  const answer = async (): Promise<void> => {
    if (path === '/healthz') return send(response, 200, { status: 'ok' });
    if (path === '/v1/orders') {
      const limit = limitOf(url.searchParams);
      const { rows } = await pool.query<Row>(listOrdersSql, [tenantId, '0', limit + 1]);
      return send(
        response,
        200,
        page(rows, limit, (row) => row.seq, ({ seq: _seq, ...item }) => item),
      );
    }
    if (path.startsWith('/v1/orders/')) {
      const orderId = decodeURIComponent(path.slice('/v1/orders/'.length));
      const { rows } = await pool.query<Row>(getOrderSql, [tenantId, tenantId, orderId]);
      const order = rows[0];
      if (order === undefined) return send(response, 404, { title: 'not found' });
      // NULL columns are absent, as the API's withoutNullColumns makes them.
      for (const key of Object.keys(order)) if (order[key] === null) delete order[key];
      return send(response, 200, order);
    }
    if (path === '/v1/inventory/balances') {
      const limit = limitOf(url.searchParams);
      const { rows } = await pool.query<Row>(listBalancesSql, [tenantId, limit + 1]);
      return send(
        response,
        200,
        page(rows, limit, (row) => row.boxId, (row) => row),
      );
    }
    return send(response, 404, { title: 'not found' });
  };
  answer().catch((error: unknown) => {
    process.stderr.write(`baseline: ${String(error)}\n`);
    if (!response.headersSent) send(response, 500, { title: 'error' });
    else response.destroy();
  });
});

server.listen(port, '127.0.0.1', () => process.stderr.write(`baseline listening on ${port}\n`));

const shutdown = (): void => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
