import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { issuableScopes } from '../../src/keys/scopes.js';
import { apiClient, useApiBed } from '../support/useApiBed.js';

const run = promisify(execFile);

// The example syncs a change feed: a cluster of the file's own, so that no other file's transaction holds the log's horizon back.
const given = useApiBed({ ownCluster: true, scopes: issuableScopes.filter((scope) => scope !== 'catalog.cost:read'), bed: { tenants: 1 } });
const { get, allPages } = apiClient(given);
let stateDir: string;
beforeAll(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'erp-sync-'));
});
afterAll(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

function example(apiKey: string, stateFile = path.join(stateDir, 'cursor.txt')) {
  const env = { ...process.env, SUPPLY_API_URL: given.bed.baseUrl, SUPPLY_API_KEY: apiKey, SUPPLY_SYNC_STATE: stateFile };
  return run('node', ['bin/run-ts.js', 'examples/erp-sync.ts', '--once'], { env, timeout: 120_000 }).catch(
    (failure: { code?: number; stdout?: string }) => ({ stdout: failure.stdout ?? '', code: failure.code }),
  );
}

describe('examples/erp-sync.ts against the demo history', () => {
  test('syncs the whole catalog and every order, builds the weekly briefing, and exits; run again, it reads only the orders changed meanwhile', async () => {
    const { stdout } = await example(given.key);
    const events = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const items = await get<{ data: unknown[] }>('/v1/catalog/items');
    const orders = (await allPages('/v1/orders')).length;
    expect(events.map((event) => event.event)).toEqual(['connected', 'catalog', 'orders', 'briefing']);
    expect(events[0]).toMatchObject({ workspaceId: given.tenant.workspaceId });
    expect(events[1]).toEqual({ event: 'catalog', items: items.data.length });
    expect(events[2]).toMatchObject({ event: 'orders', full: true, changed: orders });
    expect(events[3]?.rows).toBeGreaterThan(3);
    expect(events[3]?.checksum).toMatch(/^[0-9a-f]{64}$/);

    const tenant = given.tenant;
    const placed = await given.bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await given.bed.console.advanceOrder({ workspaceId: tenant.workspaceId, orderId: placed.orderId });
    await given.bed.settle();
    const again = (await example(given.key)).stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(again[2]).toMatchObject({ event: 'orders', full: false, changed: 1, requests: 1 });
  });

  test('a revoked key ends it with the problem code and exit code 2', async () => {
    const tenant = given.tenant;
    const revoked = await given.bed.issueKey(tenant, ['orders:read']);
    await given.bed.revokeKey(revoked);
    const outcome = await example(revoked, path.join(stateDir, 'revoked.txt'));
    expect(JSON.parse(outcome.stdout.trim())).toMatchObject({ event: 'failed', code: 'api_keys.invalid', status: 401 });
    expect('code' in outcome ? outcome.code : 0).toBe(2);
  });
});
