import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { normalizeObjectSchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import type { CallToolResult, ListToolsResult, Tool as ToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { approvalPolicySummary } from '../console/approvalPolicy.js';
import type { Logger } from '../platform/logger.js';
import { slonikRowReader } from '../platform/projectionReader.js';
import type { ReadRouter } from '../platform/readReplicas.js';
import { ApiError, databaseUnavailableRetrySeconds, serviceUnavailable } from '../platform/errors.js';
import { isDatabaseUnreachable } from '../platform/primaryLocator.js';
import { problemDocument } from '../api/problems/problemDocument.js';
import type { RequestBudget } from '../api/rateLimit/requestBudget.js';
import { invokeOperation, type OperationServices } from '../api/v1/invokeOperation.js';
import type { Operation } from '../api/v1/operation.js';
import { limitParameter, maxPageSize } from '../api/v1/parameters.js';
import { asOperationPrincipal, effectiveScopes, mayUseScope, type McpPrincipal } from './mcpPrincipal.js';
import { toolDescriptions } from './toolDescriptions.js';

export type McpDependencies = OperationServices & {
  /** The primary: tokens, OAuth state, operations that read their own writes, what reads store. */
  readonly db: DatabasePool;
  /** Where tool reads go when hot standbys serve them (READ_DATABASE_URL); absent: the primary. */
  readonly router?: ReadRouter;
  readonly budget: RequestBudget;
  readonly operations: readonly Operation[];
  readonly logger: Logger;
  readonly errorTypeBase: string;
  readonly version: string;
  /** Counts each tool call and how it ended (metrics). */
  readonly observeToolCall?: (tool: string, outcome: 'ok' | 'error') => void;
};

export const approvalPolicyResource = {
  name: 'approval-policy-summary',
  uri: 'supply://approval-policy/summary',
  permission: 'orders.approve',
} as const;

/** A /v1 operation as a tool: its parameters (path and query) as one object of arguments. */
export type Tool = {
  readonly name: string;
  readonly operation: Operation;
  readonly description: string;
  readonly input: z.AnyZodObject;
  readonly paramNames: readonly string[];
};

/** A parameter with its OpenAPI description as the JSON Schema description a model reads. */
function described(schema: z.ZodTypeAny): z.ZodTypeAny {
  const description = schema._def.openapi?.metadata?.description;
  return description === undefined ? schema : schema.describe(description);
}

// /v1 reads `limit` from a query string; a model sends JSON, so the tool takes an integer as well.
const toolLimit = z
  .union([z.number().int().min(1).max(maxPageSize), limitParameter])
  .optional()
  .describe(limitParameter._def.openapi?.metadata?.description ?? `Page size, 1 to ${maxPageSize}.`);

/** One tool per /v1 read operation that has a tool description, with /v1's parameter schemas. */
export function toolsOf(operations: readonly Operation[]): Tool[] {
  return operations.flatMap((operation) => {
    const description = toolDescriptions[operation.operationId];
    if (description === undefined || operation.method !== 'get') return [];
    const paramShape = Object.fromEntries(Object.entries(operation.params?.shape ?? {}).map(([name, schema]) => [name, described(schema as z.ZodTypeAny)]));
    const queryShape = Object.fromEntries(
      Object.entries(operation.query?.shape ?? {}).map(([name, schema]) => [name, name === 'limit' ? toolLimit : described(schema as z.ZodTypeAny)]),
    );
    return [{ name: operation.operationId, operation, description, input: z.object({ ...paramShape, ...queryShape }).strict(), paramNames: Object.keys(paramShape) }];
  });
}

/** The tools of /mcp and the `tools/list` answer of each set of usable scopes, built once. */
export type ToolCatalogue = {
  readonly tools: readonly Tool[];
  /** The tools this principal may call (its token's scopes that its member's permissions allow). */
  listFor(principal: McpPrincipal): ListToolsResult;
};

/** A tool as McpServer's own `tools/list` handler describes it (the same JSON Schema conversion). */
function definitionOf(tool: Tool): ToolDefinition {
  const input = normalizeObjectSchema(tool.input);
  const output = normalizeObjectSchema(tool.operation.response);
  if (input === undefined) throw new Error(`the input schema of ${tool.name} is not an object schema`);
  return {
    name: tool.name,
    title: tool.operation.summary,
    description: tool.description,
    inputSchema: toJsonSchemaCompat(input, { strictUnions: true, pipeStrategy: 'input' }) as ToolDefinition['inputSchema'],
    ...(output === undefined ? {} : { outputSchema: toJsonSchemaCompat(output, { strictUnions: true, pipeStrategy: 'output' }) as ToolDefinition['inputSchema'] }),
    annotations: toolAnnotations,
  };
}

const toolAnnotations = { readOnlyHint: true, openWorldHint: false };

/**
 * The tool list is the largest answer of /mcp (the JSON schemas of some twenty operations) and the
 * same for every member whose usable scopes are the same: made once per such set (at most 2^7),
 * not once per request.
 */
export function toolCatalogue(operations: readonly Operation[]): ToolCatalogue {
  const tools = toolsOf(operations);
  const definitions = new Map<string, ToolDefinition>();
  const lists = new Map<string, ListToolsResult>();
  return {
    tools,
    listFor(principal) {
      const usable = effectiveScopes(principal).sort();
      const key = usable.join(' ');
      let list = lists.get(key);
      if (list === undefined) {
        const allowed = tools.filter((tool) => tool.operation.scope === null || usable.includes(tool.operation.scope));
        list = {
          tools: allowed.map((tool) => {
            let definition = definitions.get(tool.name);
            if (definition === undefined) {
              definition = definitionOf(tool);
              definitions.set(tool.name, definition);
            }
            return definition;
          }),
        };
        lists.set(key, list);
      }
      return list;
    },
  };
}

/** What the initialize result tells an assistant about using these tools. */
export const serverInstructions = [
  "Read-only data of one dental clinic organisation (the signed-in member's workspace): clinics, warehouses, catalog, stock, orders, deliveries and analytics. Nothing here changes anything.",
  'Tools you may not use (your sign-in scopes or the member permissions do not allow them) are not listed.',
  'Paginated lists (listOrders, listFulfillments, listInventoryBalances) return at most `limit` items (1 to 200, default 50) with `hasMore`; while it is true, call again with `cursor` set to the `nextCursor` of the previous answer and the same filters. Other lists return everything at once.',
  'Change feeds (listOrderChanges, listFulfillmentChanges, listInventoryBalanceChanges) answer what changed since `cursor`: keep the `syncCursor` of an answer and pass it next time; an empty page means nothing changed.',
  'Analytics answers carry `evidenceId`s: each names how one figure was computed (the projection checkpoint it was read at); quote it when you report that figure, so that a person can verify it (`supply-api evidence verify EVIDENCE_ID`). Use exceptions and briefing figures as leads, then drill down with the ids they carry (drillDownId: an order, box, catalog item or delivery).',
  'Quantities are in each catalog item\'s own unit of measure: never add quantities of different items. Ids are opaque: copy them exactly.',
].join('\n');

/** A JSON-RPC error with `code` and `data` whose message is not prefixed the way McpError's is. */
class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

/** A tool's handler whose calls are counted by outcome. */
function observed(deps: McpDependencies, tool: string, handler: (args: Record<string, unknown>) => Promise<CallToolResult>) {
  return async (args: Record<string, unknown>): Promise<CallToolResult> => {
    const result = await handler(args);
    deps.observeToolCall?.(tool, result.isError === true ? 'error' : 'ok');
    return result;
  };
}

/**
 * The MCP server of one request (the transport is stateless): the tools and the approval-policy
 * resource, acting for the signed-in member. Every tool is registered (a call of one the member may
 * not use answers `common.forbidden`), but `tools/list` names only those it may use.
 */
export function createMcpServer(deps: McpDependencies, catalogue: ToolCatalogue, principal: McpPrincipal, requestId: string): McpServer {
  const server = new McpServer(
    { name: 'dental-supply-read-api', version: deps.version },
    { capabilities: { tools: {}, resources: {} }, instructions: serverInstructions },
  );
  const tools = catalogue.tools;
  const problem = (error: ApiError, target: string) =>
    problemDocument(error, { errorTypeBase: deps.errorTypeBase, language: 'en', requestId, path: `/mcp#${target}` });
  const failed = (error: ApiError, target: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: JSON.stringify(problem(error, target)) }] });

  /** The request budget of the token's grant, as a key's: one unit per tool call or resource read. */
  const spend = async (): Promise<ApiError | undefined> => {
    const decision = await deps.budget.consume(asOperationPrincipal(principal).prefix);
    return decision.allowed ? undefined : new ApiError('common.too_many_requests');
  };

  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.operation.summary,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.operation.response,
        annotations: toolAnnotations,
      },
      observed(deps, tool.name, async (args: Record<string, unknown>): Promise<CallToolResult> => {
        const scope = tool.operation.scope;
        if (scope !== null && !mayUseScope(principal, scope)) return failed(new ApiError('common.forbidden'), tool.name);
        const overBudget = await spend();
        if (overBudget !== undefined) return failed(overBudget, tool.name);
        const params: Record<string, unknown> = {};
        const query: Record<string, unknown> = {};
        for (const [name, value] of Object.entries(args)) {
          if (value === undefined) continue;
          if (tool.paramNames.includes(name)) params[name] = value;
          else query[name] = value;
        }
        try {
          // The token was checked on the primary when the request began; reads run on one
          // connection of a standby (or of the primary), unguarded; what they store goes to the primary.
          const onStandby = tool.operation.readsOwnWrites !== true && deps.router !== undefined ? deps.router.route() : undefined;
          const invoke = (pool: DatabasePool, standby: boolean) =>
            pool.connect((db) =>
              invokeOperation(
                deps,
                tool.operation,
                { principal: asOperationPrincipal(principal), db, primary: standby ? deps.db : db, reads: slonikRowReader(db), readGuard: undefined, language: 'en', requestId },
                { params, query, body: {} },
              ),
            );
          const result =
            onStandby === undefined || !onStandby.standby
              ? await invoke(deps.db, false)
              : await invoke(onStandby.db, true).catch((error: unknown) => {
                  if (error instanceof ApiError) throw error;
                  deps.logger.warn({ standby: onStandby.name, err: error, tool: tool.name }, 'a tool read failed on a standby; serving it on the primary');
                  return invoke(deps.db, false);
                });
          // Through JSON text, so that stored JSON (JsonText) is plain data in the structured content too.
          const text = JSON.stringify(result);
          return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
        } catch (error) {
          if (error instanceof ApiError) return failed(error, tool.name);
          if (isDatabaseUnreachable(error)) {
            deps.logger.warn({ err: error, requestId, tool: tool.name }, 'tool call failed: no database could be reached');
            return failed(serviceUnavailable(databaseUnavailableRetrySeconds), tool.name);
          }
          deps.logger.error({ err: error, requestId, tool: tool.name, tenant: principal.tenantId }, 'tool call failed');
          return failed(new ApiError('common.internal_error'), tool.name);
        }
      }),
    );
  }

  server.registerResource(
    approvalPolicyResource.name,
    approvalPolicyResource.uri,
    {
      title: 'Approval policy summary',
      description:
        'Which approval steps an order needs (clinical lead, manager, finance), the permission each step requires, how many approvers, and the order-value thresholds. Readable by members who hold orders.approve.',
      mimeType: 'application/json',
    },
    async (uri) => {
      if (!principal.permissions.includes(approvalPolicyResource.permission)) {
        throw new JsonRpcError(ErrorCode.InvalidRequest, 'Forbidden: reading the approval policy needs the member permission orders.approve', problem(new ApiError('common.forbidden'), approvalPolicyResource.name));
      }
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(approvalPolicySummary()) }] };
    },
  );
  server.server.setRequestHandler(ListToolsRequestSchema, () => catalogue.listFor(principal));
  // The endpoint is stateless: it can never notify a client that a list changed.
  server.server.registerCapabilities({ tools: { listChanged: false }, resources: { listChanged: false } });
  return server;
}
