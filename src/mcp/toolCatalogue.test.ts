import { describe, expect, test } from 'vitest';
import { v1Operations } from '../api/v1/operations.js';
import { issuableScopes } from '../keys/scopes.js';
import type { McpPrincipal } from './mcpPrincipal.js';
import { toolCatalogue } from './mcpServer.js';

const member = (permissions: string[], scopes: readonly string[] = issuableScopes): McpPrincipal => ({ tenantId: 't', memberId: 'm', grantId: 'g', scopes, permissions });

describe('the tool list of /mcp', () => {
  test('is built once per set of usable scopes and then answered as is', () => {
    const catalogue = toolCatalogue(v1Operations);
    const owner = catalogue.listFor(member(['reports.view', 'orders.approve', 'inventory.manage', 'catalog.manage']));
    expect(catalogue.listFor({ ...member(['catalog.manage', 'inventory.manage', 'orders.approve', 'reports.view']), grantId: 'other' })).toBe(owner);
    expect(owner.tools).toHaveLength(23);
    expect(catalogue.listFor(member([]))).not.toBe(owner);
  });

  test('names only the tools the token scopes and the member permissions allow', () => {
    const catalogue = toolCatalogue(v1Operations);
    const clinician = catalogue.listFor(member(['orders.create']));
    const names = clinician.tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['listClinics', 'listCatalogItems', 'listOrders', 'getFulfillment']));
    expect(names).not.toContain('getBriefing');
    expect(names).not.toContain('listInventoryBalances');
    const narrowed = catalogue.listFor(member(['reports.view'], ['analytics:read']));
    expect(narrowed.tools.map((tool) => tool.name).sort()).toEqual(
      ['getApprovalBacklog', 'getBriefing', 'getClinicComparison', 'getConsumptionTrend', 'getCycleTime', 'getExceptions', 'getMetric'].sort(),
    );
    const order = catalogue.listFor(member(['orders.create'], ['orders:read'])).tools.find((tool) => tool.name === 'getOrder');
    expect(order?.inputSchema).toMatchObject({ type: 'object', required: ['orderId'] });
    expect(order?.outputSchema?.type).toBe('object');
    expect(order?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
  });
});
