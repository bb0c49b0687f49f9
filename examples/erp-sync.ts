// ERP sync with @dental-supply/read-api-client: the catalog, then orders from the change feed (a full
// sync the first time, only what changed afterwards, resumed from a saved cursor after a restart),
// and the weekly briefing file. Run: SUPPLY_API_URL=… SUPPLY_API_KEY=… node bin/run-ts.js examples/erp-sync.ts [--once]
// (--once: one sync and exit; without it, it polls the feed every 15 s). SUPPLY_SYNC_STATE names
// the file the cursor is kept in (default .data/erp-sync-cursor.txt).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createClient, NetworkError, ProblemError, type OrderListItem } from '@dental-supply/read-api-client';

const erp = { items: new Map<string, string>(), orders: new Map<string, OrderListItem>() }; // stands in for the ERP's tables
const log = (event: string, fields: object) => console.log(JSON.stringify({ event, ...fields }));
const stateFile = process.env.SUPPLY_SYNC_STATE ?? '.data/erp-sync-cursor.txt';
const client = createClient({
  baseUrl: process.env.SUPPLY_API_URL ?? 'http://localhost:8080',
  apiKey: process.env.SUPPLY_API_KEY ?? '',
  retry: { maxRetries: 5, onRetry: ({ waitSeconds, url }) => log('rate limited', { waitSeconds, url }) },
});

/** One sync of the orders feed from the saved cursor; the cursor is saved once every order is in the ERP. */
async function syncOrders(): Promise<void> {
  const saved = await readFile(stateFile, 'utf8').then((text) => text.trim() || undefined, () => undefined);
  const sync = client.sync.orders({ cursor: saved });
  let changed = 0;
  for await (const order of sync) {
    erp.orders.set(order.orderId, order); // idempotent upsert: an order may come again after a crash
    changed += 1;
  }
  if (sync.cursor !== undefined) {
    await mkdir(dirname(stateFile), { recursive: true });
    await writeFile(stateFile, sync.cursor);
  }
  log('orders', { full: saved === undefined, changed, requests: sync.requests, budgetRemaining: client.budget?.remaining });
}

try {
  const me = await client.get('/v1/me');
  log('connected', { workspaceId: me.workspaceId, scopes: me.scopes });
  for await (const item of client.paginate('/v1/catalog/items')) erp.items.set(item.itemId, item.sku);
  log('catalog', { items: erp.items.size });
  await syncOrders();
  const briefing = await client.exports.build({ period: 'weekly', language: 'en' });
  const rows = new TextDecoder().decode(briefing.bytes).trim().split('\r\n').length - 1;
  log('briefing', { exportId: briefing.exportId, bytes: briefing.byteSize, checksum: briefing.checksum, asOf: briefing.asOf, rows });
  while (!process.argv.includes('--once')) {
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    await syncOrders();
  }
} catch (error) {
  if (error instanceof ProblemError) {
    log('failed', { code: error.code, status: error.status, requestId: error.requestId });
    process.exitCode = error.code === 'api_keys.invalid' ? 2 : 1;
  } else if (error instanceof NetworkError) {
    log('unreachable', { url: error.url, message: error.message });
    process.exitCode = 3;
  } else {
    throw error;
  }
}
