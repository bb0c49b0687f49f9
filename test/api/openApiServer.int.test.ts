import { afterEach, describe, expect, test } from 'vitest';
import { createApiTestBed, type ApiTestBed } from '../support/apiTestBed.js';
import { services } from '../support/services.js';

/** The server the served OpenAPI document names, as the composition root builds it. */
describe.runIf(services.postgres)('the server of GET /openapi.json', () => {
  let bed: ApiTestBed | undefined;
  afterEach(async () => {
    await bed?.close();
    bed = undefined;
  });

  async function servedServers(env: Record<string, string>): Promise<unknown> {
    bed = await createApiTestBed({ tenants: 1, days: 1, env });
    const served = await fetch(`${bed.baseUrl}/openapi.json`);
    expect(served.status).toBe(200);
    return ((await served.json()) as { servers?: unknown }).servers;
  }

  test('without PUBLIC_BASE_URL: `/`, the origin the document was loaded from (whichever name or port reached it)', async () => {
    expect(await servedServers({})).toEqual([{ url: '/', description: expect.stringMatching(/address this document was loaded from/) as unknown, 'x-internal': false }]);
  });

  test('PUBLIC_BASE_URL, when set, is the server', async () => {
    expect(await servedServers({ PUBLIC_BASE_URL: 'https://supply.example.com' })).toEqual([
      { url: 'https://supply.example.com', description: expect.stringMatching(/^Production/) as unknown, 'x-internal': false },
    ]);
  });
});
