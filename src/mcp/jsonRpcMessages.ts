import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import {
  CallToolRequestSchema,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  ErrorCode,
  InitializeRequestSchema,
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';

/** The protocol version that removed JSON-RPC batches: from it on, a POST carries one message. */
export const batchesRemovedIn = '2025-06-18';

export type ReadMessages =
  | { readonly ok: true; readonly body: unknown; readonly messages: readonly JSONRPCMessage[] }
  | { readonly ok: false; readonly status: number; readonly code: number; readonly message: string };

function refused(status: number, code: number, message: string): ReadMessages {
  return { ok: false, status, code, message };
}

function whyNotAMessage(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'each message must be a JSON object';
  if ((value as { jsonrpc?: unknown }).jsonrpc !== '2.0') return 'a message must carry "jsonrpc": "2.0"';
  return 'not a JSON-RPC request, notification or response (method, id, params, result or error of the wrong type, or unknown members)';
}

/**
 * The JSON-RPC messages of a POST body, or why it is refused: -32700 when it is not JSON, -32600
 * when it is JSON but not JSON-RPC, an empty batch, a batch of more than the SDK's 100 messages,
 * or a batch at all under a protocol version that has none (the MCP-Protocol-Version header, or
 * the version an initialize request in it asks for).
 */
export function readMessages(text: string, protocolVersionHeader: string | undefined): ReadMessages {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refused(400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON');
  }
  const batch = Array.isArray(body);
  const items: unknown[] = Array.isArray(body) ? body : [body];
  if (items.length === 0) return refused(400, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch');
  if (items.length > MAX_BATCH_SIZE) return refused(400, ErrorCode.InvalidRequest, `Invalid Request: a batch must not exceed ${MAX_BATCH_SIZE} messages`);
  const messages: JSONRPCMessage[] = [];
  for (const item of items) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return refused(400, ErrorCode.InvalidRequest, `Invalid Request: ${whyNotAMessage(item)}`);
    messages.push(parsed.data);
  }
  if (batch) {
    const initialize = messages.find((message) => isInitializeRequest(message));
    const version = (initialize !== undefined && isInitializeRequest(initialize) ? initialize.params.protocolVersion : undefined) ?? protocolVersionHeader ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    if (version >= batchesRemovedIn) {
      return refused(400, ErrorCode.InvalidRequest, `Invalid Request: protocol version ${version} has no batches (removed in ${batchesRemovedIn}); send one JSON-RPC message per POST`);
    }
  }
  return { ok: true, body, messages };
}

/** What the request budget is charged for a body: every message but tool calls, which the tool charges itself. */
export function budgetCost(messages: readonly JSONRPCMessage[]): number {
  return messages.filter((message) => !(isJSONRPCRequest(message) && message.method === 'tools/call')).length;
}

/** The id of the one request of a body, for an error answering it; null otherwise. */
export function soleRequestId(messages: readonly JSONRPCMessage[]): string | number | null {
  const requests = messages.filter((message) => isJSONRPCRequest(message));
  const [only] = requests;
  return requests.length === 1 && only !== undefined && isJSONRPCRequest(only) ? only.id : null;
}

/** The requests this endpoint answers, with the SDK's own schemas of their parameters. */
const requestSchemas = new Map<string, { safeParse(value: unknown): { success: boolean; error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } } }>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/templates/list', ListResourceTemplatesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
]);

/**
 * Why a request's parameters do not fit its method (answered -32602 Invalid params), or undefined.
 * The SDK would parse them only inside its handler and answer a failure -32603 with the schema's
 * raw errors.
 */
export function invalidParams(message: JSONRPCMessage): string | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const schema = requestSchemas.get(message.method);
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(message);
  if (parsed.success) return undefined;
  const problems = (parsed.error?.issues ?? []).slice(0, 3).map((issue) => `${issue.path.map(String).join('.') || 'message'}: ${issue.message}`);
  return `Invalid params for ${message.method}: ${problems.join('; ') || 'not valid'}`;
}
