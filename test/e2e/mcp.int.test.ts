import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { issuableScopes } from '../../src/keys/scopes.js';
import { testErrorTypeBase } from '../support/apiTestBed.js';
import { MemoryOAuthProvider, signIn } from '../support/mcpClient.js';
import type { Json, ToolCall } from '../support/mcpSuite.js';
import { bed, tenantA, tenantB, ownerKey, owner, codeFor, activeMemberWithout, textOf, callTool, problemOf, v1PathOf, withoutVolatile, rawMcp, accessTokenOf, useMcpBed, expectNoSecretInLogs } from '../support/mcpSuite.js';

useMcpBed();
afterAll(expectNoSecretInLogs);

describe('discovery', () => {
  test('RFC 9728 protected-resource metadata names /mcp, this server and the seven scopes; RFC 8414 metadata offers S256 only', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = await fetch(`${bed.baseUrl}${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ resource: `${bed.baseUrl}/mcp`, authorization_servers: [`${bed.baseUrl}/`], scopes_supported: [...issuableScopes] });
    }
    const metadata = (await (await fetch(`${bed.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Json;
    expect(metadata).toMatchObject({
      issuer: `${bed.baseUrl}/`,
      authorization_endpoint: `${bed.baseUrl}/authorize`,
      token_endpoint: `${bed.baseUrl}/token`,
      registration_endpoint: `${bed.baseUrl}/register`,
      revocation_endpoint: `${bed.baseUrl}/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      response_types_supported: ['code'],
    });
  });

  test('without a token /mcp answers 401 with WWW-Authenticate naming the resource metadata', async () => {
    const response = await rawMcp(undefined, { accept: 'application/json, text/event-stream', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(new RegExp(`^Bearer .*resource_metadata="${bed.baseUrl.replace(/\./g, '\\.')}/\\.well-known/oauth-protected-resource/mcp"`));
    // RFC 6750 §3.1: no error code for a request without credentials; the scopes to ask for (MCP).
    expect(challenge).not.toContain('error=');
    expect(challenge).toContain(`scope="${issuableScopes.join(' ')}"`);
    const invalid = await rawMcp('dsa_at_not-a-token', { accept: 'application/json', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="[^"]+", scope="[^"]+"$/);
  });
});

describe('signed in as the owner', () => {
  let client: Client;
  let provider: MemoryOAuthProvider;

  beforeAll(async () => {
    ({ client, provider } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA))));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
  });

  test('initialize: no list-changed notifications (the endpoint is stateless), and instructions on paging and evidence ids', () => {
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.tools?.listChanged).toBe(false);
    expect(capabilities?.resources?.listChanged).toBe(false);
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toMatch(/nextCursor/);
    expect(instructions).toMatch(/evidenceId/);
  });

  test('tools/list: one tool per /v1 read operation, with /v1 parameter names and descriptions for a model', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'listClinics',
        'listWarehouses',
        'listCatalogItems',
        'getCatalogItem',
        'listCatalogCategories',
        'listInventoryBalances',
        'getInventoryBox',
        'getInventoryBoxBalance',
        'listInventoryBoxMovements',
        'listOrders',
        'listOrderChanges',
        'getOrder',
        'listFulfillments',
        'listFulfillmentChanges',
        'getFulfillment',
        'listInventoryBalanceChanges',
        'getMetric',
        'getExceptions',
        'getClinicComparison',
        'getConsumptionTrend',
        'getApprovalBacklog',
        'getCycleTime',
        'getBriefing',
      ].sort(),
    );
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('getOrder')?.inputSchema).toMatchObject({ type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } });
    expect(Object.keys(byName.get('listOrders')?.inputSchema.properties ?? {}).sort()).toEqual(['cursor', 'limit', 'status']);
    expect(Object.keys(byName.get('listInventoryBalances')?.inputSchema.properties ?? {}).sort()).toEqual(['catalogItemId', 'cursor', 'limit', 'warehouseId']);
    for (const tool of tools) {
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(60);
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
  });

  test('a call per tool answers what /v1 answers, in structuredContent and as JSON text', async () => {
    const firstFulfillment = (await bed.request('/v1/fulfillments?limit=1', { key: ownerKey })).body as { data: { orderId: string }[] };
    const fulfilledOrder = firstFulfillment.data[0]?.orderId;
    expect(fulfilledOrder).toBeDefined();
    const calls: ToolCall[] = [
      { name: 'listClinics', args: {} },
      { name: 'listWarehouses', args: {} },
      { name: 'listCatalogItems', args: {} },
      { name: 'getCatalogItem', args: { itemId: tenantA.itemIds[0] } },
      { name: 'listCatalogCategories', args: {} },
      { name: 'listInventoryBalances', args: { limit: 5 } },
      { name: 'getInventoryBox', args: { boxId: tenantA.boxIds[0] } },
      { name: 'getInventoryBoxBalance', args: { boxId: tenantA.boxIds[0] } },
      { name: 'listInventoryBoxMovements', args: { boxId: tenantA.boxIds[0] } },
      { name: 'listOrders', args: { limit: 3, status: 'closed' } },
      { name: 'getOrder', args: { orderId: tenantA.orderIds[0] } },
      { name: 'listFulfillments', args: { limit: 2 } },
      { name: 'getFulfillment', args: { orderId: fulfilledOrder } },
      { name: 'listOrderChanges', args: { limit: 4 } },
      { name: 'listFulfillmentChanges', args: {} },
      { name: 'listInventoryBalanceChanges', args: { limit: 200 } },
      { name: 'getMetric', args: { metric: 'LOW_STOCK' }, analytics: true },
      { name: 'getExceptions', args: {}, analytics: true },
      { name: 'getClinicComparison', args: {}, analytics: true },
      { name: 'getConsumptionTrend', args: { granularity: 'week' }, analytics: true },
      { name: 'getApprovalBacklog', args: {}, analytics: true },
      { name: 'getCycleTime', args: {}, analytics: true },
      { name: 'getBriefing', args: { period: 'weekly' }, analytics: true },
    ];
    for (const call of calls) {
      const result = await callTool(client, call.name, call.args);
      expect(result.isError, `${call.name}: ${textOf(result)}`).toBeFalsy();
      expect(JSON.parse(textOf(result)), call.name).toEqual(result.structuredContent);
      const v1 = await bed.request(v1PathOf(call.name, call.args), { key: ownerKey });
      expect(v1.status, call.name).toBe(200);
      if (call.analytics === true) expect(withoutVolatile(result.structuredContent), call.name).toEqual(withoutVolatile(v1.body));
      else expect(result.structuredContent, call.name).toEqual(v1.body);
    }
  });

  test('pages follow with the nextCursor, as on /v1; a cursor of /v1 works here too', async () => {
    const first = await callTool(client, 'listOrders', { limit: 2 });
    const page = first.structuredContent as { data: { orderId: string }[]; hasMore: boolean; nextCursor?: string };
    expect(page.hasMore).toBe(true);
    const second = await callTool(client, 'listOrders', { limit: '2', cursor: page.nextCursor });
    const v1 = await bed.request(`/v1/orders?limit=2&cursor=${encodeURIComponent(page.nextCursor ?? '')}`, { key: ownerKey });
    expect(second.structuredContent).toEqual(v1.body);
  });

  test('change feeds follow with the syncCursor, as on /v1: a cursor kept from a feed answers an empty page with the same cursor when nothing changed', async () => {
    let cursor: string | undefined;
    for (;;) {
      const result = await callTool(client, 'listOrderChanges', { limit: 200, ...(cursor === undefined ? {} : { cursor }) });
      const page = result.structuredContent as { data: unknown[]; hasMore: boolean; syncCursor: string };
      cursor = page.syncCursor;
      if (!page.hasMore) break;
    }
    const again = await callTool(client, 'listOrderChanges', { cursor });
    expect(again.structuredContent).toEqual({ data: [], hasMore: false, syncCursor: cursor });
    const v1 = await bed.request(`/v1/orders/changes?cursor=${encodeURIComponent(cursor ?? '')}`, { key: ownerKey });
    expect(v1.body).toEqual(again.structuredContent);
  });

  test('errors inside a tool are problem documents with instance /mcp#<tool>, in English', async () => {
    const notFound = await problemOf(client, 'getOrder', { orderId: tenantB.orderIds[0] });
    expect(notFound).toMatchObject({
      type: `${testErrorTypeBase}/orders.not_found`,
      title: 'Order not found',
      status: 404,
      code: 'orders.not_found',
      instance: '/mcp#getOrder',
    });
    const unknown = await problemOf(client, 'getOrder', { orderId: 'no-such-order' });
    expect(unknown).toMatchObject({ code: 'orders.not_found', status: 404, detail: notFound.detail });
    expect(await problemOf(client, 'listOrders', { cursor: 'not-a-cursor' })).toMatchObject({ code: 'common.invalid_request', status: 400, instance: '/mcp#listOrders' });
    expect(await problemOf(client, 'getMetric', { metric: 'ORDER_CYCLE_TIME', from: '2026-10-10', to: '2026-10-01' })).toMatchObject({
      code: 'common.invalid_request',
      status: 400,
      instance: '/mcp#getMetric',
    });
    expect(await problemOf(client, 'getConsumptionTrend', { from: '2024-01-01', to: '2026-01-01' })).toMatchObject({ code: 'common.invalid_request' });
    for (const [from, to] of [['0000-01-01', '0000-01-05'], ['0000-12-30', '0001-01-02'], ['9999-12-30', '9999-12-31T23:59:59.999999999Z']]) {
      expect(await problemOf(client, 'getConsumptionTrend', { from, to })).toMatchObject({ code: 'common.invalid_request', status: 400, instance: '/mcp#getConsumptionTrend' });
    }
  });

  test('unknown tools and arguments that do not match the schema give isError with a plain text message', async () => {
    for (const [name, args] of [
      ['deleteOrder', {}],
      ['getOrder', {}],
      ['getOrder', { orderId: 42 }],
      ['listOrders', { limit: 0 }],
      ['listOrders', { limit: 201 }],
      ['listOrders', { status: 'lost' }],
      ['listOrders', { order_id: 'x' }],
      ['getMetric', { metric: 'REVENUE' }],
      ['getBriefing', { period: 'monthly' }],
    ] as const) {
      const result = await callTool(client, name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      const text = textOf(result);
      expect(text.length).toBeGreaterThan(0);
      expect(() => JSON.parse(text) as unknown, text).toThrow();
    }
  });

  test('the approval-policy summary resource is readable with orders.approve', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(['supply://approval-policy/summary']);
    const read = await client.readResource({ uri: 'supply://approval-policy/summary' });
    const content = read.contents[0];
    expect(content?.mimeType).toBe('application/json');
    const summary = JSON.parse(content !== undefined && 'text' in content ? content.text : '') as { policyVersion: number; steps: { stage: string; requiredPermission: string }[] };
    expect(summary.steps.map((step) => [step.stage, step.requiredPermission])).toEqual([
      ['clinical_lead', 'clinical.approve'],
      ['manager', 'orders.approve'],
      ['finance', 'orders.approve_high_value'],
    ]);
  });

  test('an API key is not accepted at /mcp, and the token is not accepted at /v1', async () => {
    const withKey = await rawMcp(ownerKey, { accept: 'application/json, text/event-stream', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(withKey.status).toBe(401);
    expect(withKey.headers.get('www-authenticate')).toContain('resource_metadata=');
    const atV1 = await bed.request('/v1/me', { key: accessTokenOf(provider) });
    expect(atV1.status).toBe(401);
    expect(atV1.body).toMatchObject({ code: 'api_keys.invalid' });
  });

  test('protocol errors: GET and DELETE 405 -32000, an Accept without JSON or SSE 406 -32000; SSE only when asked for', async () => {
    const token = accessTokenOf(provider);
    for (const method of ['GET', 'DELETE']) {
      const response = await rawMcp(token, { method, accept: 'application/json, text/event-stream' });
      expect(response.status, method).toBe(405);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    }
    for (const accept of ['text/html', 'application/xml, text/plain']) {
      const response = await rawMcp(token, { accept, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      expect(response.status, accept).toBe(406);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
    const json = await rawMcp(token, { accept: 'application/json', body: { jsonrpc: '2.0', id: 7, method: 'tools/list' } });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await json.json()) as { id: number }).id).toBe(7);
    const sse = await rawMcp(token, { accept: 'text/event-stream', body: { jsonrpc: '2.0', id: 8, method: 'tools/list' } });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await sse.text()).toMatch(/^event: message\ndata: \{.*"id":8/m);
  });

  test('the approval-policy summary without orders.approve: HTTP 200, JSON-RPC error -32600 with data.code common.forbidden', async () => {
    const memberId = activeMemberWithout(tenantA, ['orders.approve']);
    const { client: member, provider: memberProvider } = await signIn(bed.baseUrl, () => codeFor(tenantA, memberId));
    try {
      const raw = await rawMcp(accessTokenOf(memberProvider), {
        accept: 'application/json, text/event-stream',
        body: { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'supply://approval-policy/summary' } },
      });
      expect(raw.status).toBe(200);
      expect(await raw.json()).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32600, data: { code: 'common.forbidden', status: 403 } } });
      const thrown = await member.readResource({ uri: 'supply://approval-policy/summary' }).catch((error: unknown) => error);
      expect(thrown).toBeInstanceOf(McpError);
      expect(thrown).toMatchObject({ code: -32600, data: { code: 'common.forbidden' } });
      expect((thrown as McpError).message).toBe('MCP error -32600: Forbidden: reading the approval policy needs the member permission orders.approve');
    } finally {
      await member.close();
    }
  });
});

describe('scopes and member permissions', () => {
  test('a tool outside the token scopes answers common.forbidden; cost fields follow the scopes too', async () => {
    // The SDK asks for the scopes of the resource metadata; this app narrows them as a user could.
    const narrowed = new (class extends MemoryOAuthProvider {
      override redirectToAuthorization(url: URL): void {
        url.searchParams.set('scope', 'orders:read catalog:read');
        super.redirectToAuthorization(url);
      }
    })();
    const { client } = await signIn(bed.baseUrl, () => codeFor(tenantA, owner(tenantA)), { provider: narrowed });
    try {
      expect(await problemOf(client, 'listClinics')).toMatchObject({ code: 'common.forbidden', status: 403, instance: '/mcp#listClinics' });
      expect(await problemOf(client, 'getBriefing')).toMatchObject({ code: 'common.forbidden' });
      const order = await callTool(client, 'getOrder', { orderId: tenantA.orderIds[0] });
      expect(order.isError).toBeFalsy();
      const lines = (order.structuredContent as { lines: Json[] }).lines;
      expect(lines.every((line) => !('unitCost' in line))).toBe(true);
      const item = await callTool(client, 'getCatalogItem', { itemId: tenantA.itemIds[0] });
      expect(item.structuredContent).not.toHaveProperty('costStatus');
    } finally {
      await client.close();
    }
  });

  test('a member without reports.view cannot use the analytics tools, whatever the token scopes', async () => {
    const clinician = activeMemberWithout(tenantA, ['reports.view', 'catalog.manage', 'orders.approve']);
    const { client } = await signIn(bed.baseUrl, () => codeFor(tenantA, clinician));
    try {
      // Listed: only what the member may use; called anyway: common.forbidden.
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      expect(listed).toContain('listOrders');
      expect(listed.filter((name) => ['getBriefing', 'getExceptions', 'getMetric', 'getCycleTime'].includes(name))).toEqual([]);
      expect(await problemOf(client, 'getBriefing')).toMatchObject({ code: 'common.forbidden', instance: '/mcp#getBriefing' });
      const orders = await callTool(client, 'listOrders', { limit: 1 });
      expect(orders.isError).toBeFalsy();
      const item = await callTool(client, 'getCatalogItem', { itemId: tenantA.itemIds[0] });
      expect(item.structuredContent).not.toHaveProperty('costStatus');
    } finally {
      await client.close();
    }
  });
});
