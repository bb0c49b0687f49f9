import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { z } from 'zod';
import type { Principal } from '../keys/keyAuthentication.js';
import type { Scope } from '../keys/scopes.js';

/** Who an assistant request is made for: a signed-in member, through one grant, with its scopes. */
export type McpPrincipal = {
  readonly tenantId: string;
  readonly memberId: string;
  readonly grantId: string;
  readonly scopes: readonly string[];
  /** The member's console permissions, read with the token on every request. */
  readonly permissions: readonly string[];
};

const principalSchema = z.object({
  tenantId: z.string(),
  memberId: z.string(),
  grantId: z.string(),
  scopes: z.array(z.string()),
  permissions: z.array(z.string()),
});

/** The principal the token verifier put on the request's AuthInfo. */
export function mcpPrincipalOf(auth: AuthInfo | undefined): McpPrincipal | undefined {
  const parsed = principalSchema.safeParse(auth?.extra?.principal);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The console permissions that let a member read what a scope covers; `null`: every active member
 * may. A token acts for its member, so it reads nothing its member could not see in the console.
 */
export const memberPermissionsByScope: Readonly<Record<Scope, readonly string[] | null>> = {
  'clinics:read': null,
  'catalog:read': null,
  'catalog.cost:read': ['catalog.manage', 'orders.approve', 'orders.approve_high_value'],
  'inventory:read': ['inventory.manage', 'inventory.count', 'inventory.consume', 'orders.fulfil', 'reports.view'],
  'orders:read': ['orders.create', 'orders.approve', 'orders.approve_high_value', 'orders.fulfil', 'reports.view'],
  'fulfillment:read': ['orders.create', 'orders.approve', 'orders.fulfil', 'reports.view'],
  'analytics:read': ['reports.view'],
  'orders.value:read': [],
  'orders.patient_ref:read': [],
};

/** Whether the token holds the scope and its member a permission that goes with it. */
export function mayUseScope(principal: McpPrincipal, scope: Scope): boolean {
  if (!principal.scopes.includes(scope)) return false;
  const needed = memberPermissionsByScope[scope];
  return needed === null || needed.some((permission) => principal.permissions.includes(permission));
}

/**
 * The scopes an operation may use for this member: those of the token that the member's
 * permissions also allow (so `catalog.cost:read` adds cost fields only for members who see costs).
 */
export function effectiveScopes(principal: McpPrincipal): string[] {
  return principal.scopes.filter((scope) => scope in memberPermissionsByScope && mayUseScope(principal, scope as Scope));
}

/** The /v1 operations take the key principal's shape; a token's budget and handle is its grant. */
export function asOperationPrincipal(principal: McpPrincipal): Principal {
  return { tenantId: principal.tenantId, memberId: principal.memberId, prefix: `mcp:${principal.grantId}`, scopes: effectiveScopes(principal) };
}
