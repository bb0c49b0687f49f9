import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiTestBed, type ApiTestBed } from '../../../test/support/apiTestBed.js';

let bed: ApiTestBed;
beforeAll(async () => {
  bed = await createApiTestBed();
});
afterAll(async () => {
  await bed?.close();
});

describe('GET /v1/me', () => {
  test('given a key with two scopes, when it asks who it is, then it gets its workspace, environment and scopes only', async () => {
    const tenant = bed.tenants[0];
    if (!tenant) throw new Error('no tenant seeded');
    const key = await bed.issueKey(tenant, ['orders:read', 'catalog:read']);
    const response = await bed.request('/v1/me', { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ workspaceId: tenant.workspaceId, environment: 'test', scopes: ['catalog:read', 'orders:read'] });
    expect(response.text).not.toContain(key.slice(12));
  });
});
