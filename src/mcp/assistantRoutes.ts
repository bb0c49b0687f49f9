import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { localhostHostValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { issuableScopes } from '../keys/scopes.js';
import { ApiError } from '../platform/errors.js';
import { problemDocument } from '../api/problems/problemDocument.js';
import type { Limits } from '../api/rateLimit/requestBudget.js';
import { maxRequestBodyBytes, readBodyWith } from '../api/requestBodies.js';
import { stateOf } from '../api/requestState.js';
import { createAddressLimits, failedAttemptGuard, type AddressLimitSettings } from './addressLimits.js';
import { bearerAuth } from './bearerAuth.js';
import { budgetCost, invalidParams, readMessages, soleRequestId } from './jsonRpcMessages.js';
import { isAllowedOrigin, isLoopbackUrl, requestBase } from './loopback.js';
import { asOperationPrincipal, mcpPrincipalOf } from './mcpPrincipal.js';
import { createMcpServer, toolCatalogue, type McpDependencies, type ToolCatalogue } from './mcpServer.js';
import { createOAuthProvider } from './oauthProvider.js';
import { oauthRouter } from './oauthRoutes.js';

/** The transport of one request; replaceable only so that tests can make it fail. */
export type McpTransport = Pick<StreamableHTTPServerTransport, 'handleRequest' | 'close'> & Parameters<ReturnType<typeof createMcpServer>['connect']>[0];

export type AssistantDependencies = McpDependencies & {
  /** The service's public base URL, e.g. `http://localhost:8080` (known once the port is bound). */
  readonly baseUrl: () => string;
  readonly createTransport?: (options: { enableJsonResponse: boolean }) => McpTransport;
  /** Where the per-address limits are counted: Redis when REDIS_URL is set, so they hold across processes. */
  readonly limits: Limits;
  /** The per-address limits (addressLimitDefaults unless given) and their key prefix in Redis. */
  readonly addressLimits?: AddressLimitSettings;
  readonly limitKeyPrefix?: string;
};

/** Largest JSON-RPC body /mcp reads: the largest of the service (a larger one is refused before any route, requestBodies). */
const maxBodyBytes = maxRequestBodyBytes;

const resourceName = 'Dental Supply Read API (assistant endpoint)';

function jsonRpcError(response: Response, status: number, code: number, message: string, options: { headers?: Record<string, string>; id?: string | number | null; data?: unknown } = {}): void {
  response
    .status(status)
    .set(options.headers ?? {})
    .json({ jsonrpc: '2.0', error: { code, message, ...(options.data === undefined ? {} : { data: options.data }) }, id: options.id ?? null });
}

type MediaRange = { type: string; subtype: string; q: number };

function mediaRanges(accept: string): MediaRange[] {
  return accept.split(',').flatMap((part) => {
    const [range = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const [type, subtype] = range.split('/');
    if (type === undefined || subtype === undefined || type === '' || subtype === '') return [];
    const qParameter = parameters.find((parameter) => parameter.startsWith('q='));
    const q = qParameter === undefined ? 1 : Number(qParameter.slice(2));
    return [{ type, subtype, q: Number.isFinite(q) ? q : 0 }];
  });
}

function accepts(ranges: readonly MediaRange[], type: string, subtype: string): boolean {
  return ranges.some((range) => range.q > 0 && (range.type === '*' || range.type === type) && (range.subtype === '*' || range.subtype === subtype));
}

/**
 * How to answer a POST: JSON when the client accepts it (wildcards included), a server-sent event
 * stream when it accepts only that, nothing (406) when it accepts neither or sends no Accept.
 */
export function responseMode(accept: string | undefined): 'json' | 'sse' | undefined {
  if (accept === undefined) return undefined;
  const ranges = mediaRanges(accept);
  if (accepts(ranges, 'application', 'json')) return 'json';
  if (accepts(ranges, 'text', 'event-stream')) return 'sse';
  return undefined;
}

/** The authorization server and bearer check of one base URL (the base, or a loopback alias of it). */
type Served = { readonly base: string; readonly oauth: Router; readonly bearer: RequestHandler };

/**
 * The assistant endpoint and its authorization server: the SDK's OAuth handlers (RFC 8414 and
 * RFC 9728 metadata, registration, /authorize with the sign-in page, /token, /revoke) over the
 * Postgres provider, and `POST /mcp`, the stateless Streamable HTTP transport behind bearer tokens.
 * Before the transport, in this order: the Host (a loopback server answers only loopback names,
 * against DNS rebinding), the Origin of a browser page (403), Accept (406), the bearer token (401,
 * or 429 for an address with too many invalid ones), the body (one JSON-RPC message, or a batch
 * under protocol versions that have them), the sign-in's request budget (429).
 */
export function assistantRoutes(deps: AssistantDependencies): Router {
  const catalogue = toolCatalogue(deps.operations);
  const limits = createAddressLimits(deps.limits, deps.addressLimits, deps.limitKeyPrefix);
  const failures = failedAttemptGuard(limits.failedBearer);
  const scopesSupported = [...issuableScopes];

  const serve = (base: string): Served => {
    const issuerUrl = new URL(base);
    const resourceUrl = new URL('/mcp', issuerUrl);
    const provider = createOAuthProvider({ pool: deps.db, clock: deps.clock, resourceUrl: () => resourceUrl, logger: deps.logger });
    return {
      base,
      oauth: oauthRouter({ provider, issuerUrl, resourceUrl, scopesSupported, resourceName, limits }),
      bearer: bearerAuth({
        verifier: provider,
        resourceUrl,
        resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resourceUrl),
        scopes: scopesSupported,
        failures,
        logger: deps.logger,
      }),
    };
  };
  let canonical: string | undefined;
  const byBase = new Map<string, Served>();
  // Built on first use: with `--port 0` the address is known only once the server listens. A base
  // on localhost is also served as 127.0.0.1 and the other way round (loopback.ts).
  const served = (request: Request): Served => {
    const base = deps.baseUrl();
    if (base !== canonical) {
      canonical = base;
      byBase.clear();
    }
    const reached = requestBase(base, request.headers.host);
    let entry = byBase.get(reached);
    if (entry === undefined) {
      entry = serve(reached);
      byBase.set(reached, entry);
    }
    return entry;
  };

  const router = Router({ caseSensitive: true });
  const loopbackHosts = localhostHostValidation();
  router.use((request: Request, response: Response, next: NextFunction) => {
    if (isLoopbackUrl(new URL(deps.baseUrl()))) loopbackHosts(request, response, next);
    else next();
  });
  router.use((request: Request, response: Response, next: NextFunction) => served(request).oauth(request, response, next));

  const readBody = express.text({ type: () => true, limit: maxBodyBytes });
  router.post(
    '/mcp',
    (request: Request, response: Response, next: NextFunction) => {
      response.set('Cache-Control', 'no-store');
      const origin = request.headers.origin;
      if (origin !== undefined && !isAllowedOrigin(origin, served(request).base)) {
        jsonRpcError(response, 403, -32000, 'Forbidden: the Origin header names a web page this server does not answer');
        return;
      }
      if (responseMode(request.headers.accept) === undefined) {
        jsonRpcError(response, 406, -32000, 'Not Acceptable: the Accept header must include application/json or text/event-stream');
        return;
      }
      next();
    },
    (request: Request, response: Response, next: NextFunction) => served(request).bearer(request, response, next),
    (request: Request, response: Response, next: NextFunction) => {
      if (request.is('application/json') !== 'application/json') {
        jsonRpcError(response, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
        return;
      }
      readBodyWith(readBody, request, response, (error?: unknown) => {
        if (error === undefined) next();
        else if (typeof error === 'object' && error !== null && 'type' in error && error.type === 'entity.too.large') jsonRpcError(response, 413, -32000, requestBodyTooLargeMessage(maxBodyBytes));
        else jsonRpcError(response, 400, ErrorCode.ParseError, 'Parse error: the body could not be read');
      });
    },
    async (request: Request, response: Response) => {
      const header = request.headers['mcp-protocol-version'];
      const read = readMessages(typeof request.body === 'string' ? request.body : '', typeof header === 'string' ? header : undefined);
      if (!read.ok) {
        jsonRpcError(response, read.status, read.code, read.message);
        return;
      }
      if (!(await withinBudget(deps, request, response, read.messages))) return;
      await serveMcp(deps, catalogue, request, response, read.body);
    },
  );
  router.all('/mcp', (_request: Request, response: Response) => {
    jsonRpcError(response, 405, -32000, 'Method not allowed: this endpoint is stateless; send JSON-RPC messages with POST', { headers: { Allow: 'POST' } });
  });
  return router;
}

/**
 * Charges the sign-in's request budget for the body's messages (tool calls are charged by the tool,
 * whose refusal is a result the model can read); answers 429 when it is used up.
 */
async function withinBudget(deps: AssistantDependencies, request: Request, response: Response, messages: readonly JSONRPCMessage[]): Promise<boolean> {
  const principal = mcpPrincipalOf(request.auth);
  if (principal === undefined) throw new Error('bearer authentication left no principal');
  const state = stateOf(response);
  // The access log names the tenant and the grant (never the token).
  state.principal = asOperationPrincipal(principal);
  const cost = budgetCost(messages);
  if (cost === 0) return true;
  const decision = await deps.budget.consume(state.principal.prefix, cost);
  if (decision.allowed) return true;
  const retryAfter = decision.retryAfterSeconds ?? decision.resetSeconds;
  jsonRpcError(response, 429, -32000, `Too many requests: the request budget of this sign-in is used up; retry in ${retryAfter} seconds`, {
    headers: { 'Retry-After': String(retryAfter) },
    id: soleRequestId(messages),
    data: problemDocument(new ApiError('common.too_many_requests'), { errorTypeBase: deps.errorTypeBase, language: 'en', requestId: state.requestId, path: '/mcp' }),
  });
  return false;
}

async function serveMcp(deps: AssistantDependencies, catalogue: ToolCatalogue, request: Request, response: Response, body: unknown): Promise<void> {
  const state = stateOf(response);
  const principal = mcpPrincipalOf(request.auth);
  if (principal === undefined) throw new Error('bearer authentication left no principal');
  const mode = responseMode(request.headers.accept);
  const server = createMcpServer(deps, catalogue, principal, state.requestId);
  const transport = deps.createTransport?.({ enableJsonResponse: mode === 'json' }) ?? new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: mode === 'json', maxRequestBodySize: maxBodyBytes });
  response.on('close', () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  try {
    await server.connect(transport);
    // Parameters that do not fit their method are -32602 here, before the SDK's handler parses them.
    const deliver = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage, extra?: Parameters<NonNullable<McpTransport['onmessage']>>[1]) => {
      const invalid = invalidParams(message);
      if (invalid !== undefined && 'id' in message) {
        void transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: invalid } }).catch(() => undefined);
        return;
      }
      deliver?.(message, extra);
    };
    // The SDK's transport insists on both types; the choice between them was made above.
    request.headers.accept = 'application/json, text/event-stream';
    await transport.handleRequest(request as IncomingMessage, response as ServerResponse, body);
  } catch (error) {
    deps.logger.error({ err: error, requestId: state.requestId }, 'mcp transport failed');
    if (response.headersSent) response.destroy();
    else jsonRpcError(response, 500, -32603, 'Internal error');
  }
}
