import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { beforeAll, expect } from 'vitest';
import { z } from 'zod';
import { checkSignInMember } from '../../src/console/signInMember.js';
import type { TenantSummary } from '../../src/console/seedSummary.js';
import { issuableScopes } from '../../src/keys/scopes.js';
import { v1Operations } from '../../src/api/v1/operations.js';
import { issueSignInCode } from '../../src/mcp/signInCodes.js';
import { systemClock } from '../../src/platform/clock.js';
import type { ApiTestBed } from './apiTestBed.js';
import { useApiBed } from './useApiBed.js';
import type { MemoryOAuthProvider } from './mcpClient.js';

export type Json = Record<string, unknown>;

export const problemShape = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number(),
    detail: z.string(),
    instance: z.string(),
    code: z.string(),
    requestId: z.string(),
  })
  .strict();

/** The arguments of one call per tool; ids come from the seed and from /v1. */
export type ToolCall = { name: string; args: Json; analytics?: boolean };

export let bed: ApiTestBed;
export let tenantA: TenantSummary;
export let tenantB: TenantSummary;
export let ownerKey: string;
/** Every sign-in code and token the tests handled: none may reach a log line. */
export const handledSecrets: string[] = [];

export function owner(tenant: TenantSummary): string {
  const memberId = tenant.memberIds[0];
  if (memberId === undefined) throw new Error('the tenant has no member');
  return memberId;
}

export async function codeFor(tenant: TenantSummary, memberId: string): Promise<string> {
  const issued = await issueSignInCode(
    { pool: bed.database.pool, clock: systemClock, checkMember: (w, m) => checkSignInMember(bed.eventStore, w, m) },
    { workspaceId: tenant.workspaceId, memberId },
  );
  handledSecrets.push(issued.signInCode);
  return issued.signInCode;
}

/** Members whose status a test changed: later tests pick others. */
export const changedMembers: string[] = [];

/** An active member of the seed holding none of these permissions (and not changed by a test). */
export function activeMemberWithout(tenant: TenantSummary, permissions: readonly string[]): string {
  const found = tenant.members.find(
    (member) => member.status === 'active' && !changedMembers.includes(member.memberId) && permissions.every((permission) => !member.permissions.includes(permission)),
  );
  if (found === undefined) throw new Error(`no active member without ${permissions.join(', ')}`);
  return found.memberId;
}

export function textOf(result: object): string {
  const content = z.array(z.object({ type: z.literal('text'), text: z.string() })).parse('content' in result ? result.content : undefined);
  return content.map((part) => part.text).join('');
}

export async function callTool(client: Client, name: string, args: Json = {}) {
  return client.callTool({ name, arguments: args });
}

export async function problemOf(client: Client, name: string, args: Json = {}) {
  const result = await callTool(client, name, args);
  expect(result.isError).toBe(true);
  return problemShape.parse(JSON.parse(textOf(result)));
}

/** The /v1 path of an operation called with tool arguments. */
export function v1PathOf(name: string, args: Json): string {
  const operation = v1Operations.find((candidate) => candidate.operationId === name);
  if (operation === undefined) throw new Error(`no operation ${name}`);
  const query = new URLSearchParams();
  let path = operation.path;
  for (const [key, value] of Object.entries(args)) {
    if (path.includes(`{${key}}`)) path = path.replace(`{${key}}`, encodeURIComponent(String(value)));
    else query.set(key, String(value));
  }
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}

/** Analytics answers carry the time they were computed at and evidence ids that name it. */
export function withoutVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutVolatile);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'asOf' && key !== 'evidenceId').map(([key, inner]) => [key, withoutVolatile(inner)]));
  }
  return value;
}

export async function rawMcp(token: string | undefined, init: { method?: string; accept?: string; body?: Json } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };
  if (init.accept !== undefined) headers.accept = init.accept;
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return fetch(`${bed.baseUrl}/mcp`, {
    method: init.method ?? 'POST',
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
}

export function accessTokenOf(provider: MemoryOAuthProvider): string {
  const tokens = provider.tokens();
  if (tokens === undefined) throw new Error('no access token');
  handledSecrets.push(tokens.access_token, ...(tokens.refresh_token === undefined ? [] : [tokens.refresh_token]));
  return tokens.access_token;
}

/**
 * Each /mcp test file's bed: an API with two seeded tenants and an owner's
 * key holding every scope. Call once at the top of a test file.
 */
export function useMcpBed(): void {
  const given = useApiBed({ scopes: issuableScopes, bootTimeoutMs: 180_000 });
  beforeAll(() => {
    ({ bed, tenant: tenantA, otherTenant: tenantB, key: ownerKey } = given);
  });
}

/** No sign-in code or token a test handled reached a log line of the bed. */
export function expectNoSecretInLogs(): void {
  const text = bed.logs.join('\n');
  for (const secret of handledSecrets) expect(text).not.toContain(secret);
}
