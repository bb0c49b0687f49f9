// ERP sync with @dental-supply/read-api-client: catalog and orders into the ERP, then order changes
// as they happen, and the weekly briefing file. Run: SUPPLY_API_URL=… SUPPLY_API_KEY=… node bin/run-ts.js examples/erp-sync.ts [--once]
import { createClient, ProblemError, type OrderListItem } from '@dental-supply/read-api-client';

const erp = { items: new Map<string, string>(), orders: new Map<string, OrderListItem>() }; // stands in for the ERP's tables
const log = (event: string, fields: object) => console.log(JSON.stringify({ event, ...fields }));
const client = createClient({ baseUrl: process.env.SUPPLY_API_URL ?? 'http://localhost:8080', apiKey: process.env.SUPPLY_API_KEY ?? '', retry: { maxRetries: 5 } });

try {
  const me = await client.get('/v1/me');
  log('connected', { workspaceId: me.workspaceId, scopes: me.scopes });
  for await (const item of client.paginate('/v1/catalog/items')) erp.items.set(item.itemId, item.sku);
  log('catalog', { items: erp.items.size });

  // Every order once as `new`, then each status change once; idempotent upserts, as the spec advises.
  const watcher = client.watch.orders({
    intervalMs: 15_000,
    onChange: ({ kind, record }) => {
      erp.orders.set(record.orderId, record);
      if (kind === 'changed') log('order changed', { orderId: record.orderId, status: record.status, version: record.version });
    },
  });
  await watcher.poll();
  log('orders', { orders: erp.orders.size, budgetRemaining: client.budget?.remaining });

  const csv = await client.exports.build({ period: 'weekly', language: 'en' });
  log('briefing', { bytes: csv.byteLength, rows: new TextDecoder().decode(csv).trim().split('\r\n').length - 1 });
  if (process.argv.includes('--once')) await watcher.stop();
} catch (error) {
  if (!(error instanceof ProblemError)) throw error;
  log('failed', { code: error.code, status: error.status, requestId: error.requestId });
  process.exitCode = error.code === 'api_keys.invalid' ? 2 : 1;
}
