import { describe, expect, test } from 'vitest';
import { useApiBed } from '../../../test/support/useApiBed.js';

const given = useApiBed({ scopes: ['orders:read', 'catalog:read'] });

describe('GET /v1/me', () => {
  test('given a key with two scopes, when it asks who it is, then it gets its workspace, environment and scopes only', async () => {
    const { bed, tenant, key } = given;
    const response = await bed.request('/v1/me', { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ workspaceId: tenant.workspaceId, environment: 'test', scopes: ['catalog:read', 'orders:read'] });
    expect(response.text).not.toContain(key.slice(12));
  });
});
