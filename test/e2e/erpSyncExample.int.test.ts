import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { issuableScopes } from '../../src/keys/scopes.js';
import { createApiTestBed, type ApiTestBed } from '../support/apiTestBed.js';

const run = promisify(execFile);

let bed: ApiTestBed;
let key: string;
let stateDir: string;
beforeAll(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'erp-sync-'));
  bed = await createApiTestBed({ tenants: 1 });
  const tenant = bed.tenants[0];
  if (!tenant) throw new Error('no tenant');
  key = await bed.issueKey(tenant, issuableScopes.filter((scope) => scope !== 'catalog.cost:read'));
});
afterAll(async () => {
  await bed?.close();
  await rm(stateDir, { recursive: true, force: true });
});

function example(apiKey: string, stateFile = path.join(stateDir, 'cursor.txt')) {
  const env = { ...process.env, SUPPLY_API_URL: bed.baseUrl, SUPPLY_API_KEY: apiKey, SUPPLY_SYNC_STATE: stateFile };
  return run('node', ['bin/run-ts.js', 'examples/erp-sync.ts', '--once'], { env, timeout: 120_000 }).catch(
    (failure: { code?: number; stdout?: string }) => ({ stdout: failure.stdout ?? '', code: failure.code }),
  );
}

describe('examples/erp-sync.ts against the demo history', () => {
  test('syncs the whole catalog and every order, builds the weekly briefing, and exits; run again, it reads only the orders changed meanwhile', async () => {
    const { stdout } = await example(key);
    const events = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const items = (await bed.request('/v1/catalog/items', { key })).body as { data: unknown[] };
    let orders = 0;
    let cursor = '';
    for (;;) {
      const page = (await bed.request(`/v1/orders?limit=200${cursor}`, { key })).body as { data: unknown[]; nextCursor?: string };
      orders += page.data.length;
      if (page.nextCursor === undefined) break;
      cursor = `&cursor=${encodeURIComponent(page.nextCursor)}`;
    }
    expect(events.map((event) => event.event)).toEqual(['connected', 'catalog', 'orders', 'briefing']);
    expect(events[0]).toMatchObject({ workspaceId: bed.tenants[0]?.workspaceId });
    expect(events[1]).toEqual({ event: 'catalog', items: items.data.length });
    expect(events[2]).toMatchObject({ event: 'orders', full: true, changed: orders });
    expect(events[3]?.rows).toBeGreaterThan(3);
    expect(events[3]?.checksum).toMatch(/^[0-9a-f]{64}$/);

    const tenant = bed.tenants[0];
    if (!tenant) throw new Error('no tenant');
    const placed = await bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await bed.console.advanceOrder({ workspaceId: tenant.workspaceId, orderId: placed.orderId });
    await bed.settle();
    const again = (await example(key)).stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(again[2]).toMatchObject({ event: 'orders', full: false, changed: 1, requests: 1 });
  });

  test('a revoked key ends it with the problem code and exit code 2', async () => {
    const tenant = bed.tenants[0];
    if (!tenant) throw new Error('no tenant');
    const revoked = await bed.issueKey(tenant, ['orders:read']);
    await bed.revokeKey(revoked);
    const outcome = await example(revoked, path.join(stateDir, 'revoked.txt'));
    expect(JSON.parse(outcome.stdout.trim())).toMatchObject({ event: 'failed', code: 'api_keys.invalid', status: 401 });
    expect('code' in outcome ? outcome.code : 0).toBe(2);
  });
});
