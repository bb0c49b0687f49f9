import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { createOAuthMetadata, getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { issuableScopes } from '../keys/scopes.js';
import { stateOf } from '../api/requestState.js';
import { hashSecret } from './credentials.js';
import { asOperationPrincipal, mcpPrincipalOf } from './mcpPrincipal.js';
import { createMcpServer, toolsOf, type McpDependencies } from './mcpServer.js';
import { createOAuthProvider } from './oauthProvider.js';

/** The transport of one request; replaceable only so that tests can make it fail. */
export type McpTransport = Pick<StreamableHTTPServerTransport, 'handleRequest' | 'close'> & Parameters<ReturnType<typeof createMcpServer>['connect']>[0];

export type AssistantDependencies = McpDependencies & {
  /** The service's public base URL, e.g. `http://localhost:8080` (known once the port is bound). */
  readonly baseUrl: () => string;
  readonly createTransport?: (options: { enableJsonResponse: boolean }) => McpTransport;
};

const lazilyBuiltLimit = { validate: { creationStack: false } };

/** Largest JSON-RPC body /mcp reads. */
const maxBodyBytes = 64 * 1024;

function jsonRpcError(response: Response, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  response.status(status).set(headers).json({ jsonrpc: '2.0', error: { code, message }, id: null });
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

/**
 * The assistant endpoint and its authorization server: `mcpAuthRouter` (RFC 8414 and RFC 9728
 * metadata, registration, /authorize with the sign-in page, /token, /revoke) over the Postgres
 * provider, and `POST /mcp`, the stateless Streamable HTTP transport behind bearer tokens.
 */
export function assistantRoutes(deps: AssistantDependencies): Router {
  const tools = toolsOf(deps.operations);
  let built: { base: string; auth: RequestHandler; protectedResource: RequestHandler; bearer: RequestHandler } | undefined;
  // Built on first use: with `--port 0` the address is known only once the server listens.
  const current = () => {
    const base = deps.baseUrl();
    if (built?.base === base) return built;
    const issuerUrl = new URL(base);
    const resourceUrl = new URL('/mcp', issuerUrl);
    const provider = createOAuthProvider({ pool: deps.db, clock: deps.clock, resourceUrl: () => resourceUrl });
    const scopesSupported = [...issuableScopes];
    const resourceName = 'Dental Supply Read API (assistant endpoint)';
    const oauthMetadata = createOAuthMetadata({ provider, issuerUrl, scopesSupported });
    const metadataUrl = getOAuthProtectedResourceMetadataUrl(resourceUrl);
    built = {
      base,
      auth: mcpAuthRouter({
        provider,
        issuerUrl,
        scopesSupported,
        resourceName,
        resourceServerUrl: resourceUrl,
        // The SDK's per-address limits stay; building them on first use (above) is deliberate.
        authorizationOptions: { rateLimit: lazilyBuiltLimit },
        tokenOptions: { rateLimit: lazilyBuiltLimit },
        clientRegistrationOptions: { rateLimit: lazilyBuiltLimit },
        revocationOptions: { rateLimit: lazilyBuiltLimit },
      }),
      // RFC 9728 at the root as well: clients that do not append the resource path look there.
      protectedResource: metadataHandler({ resource: resourceUrl.href, authorization_servers: [oauthMetadata.issuer], scopes_supported: scopesSupported, resource_name: resourceName }),
      bearer: requireBearerAuth({ verifier: provider, resourceMetadataUrl: metadataUrl, expectedResource: resourceUrl }),
    };
    return built;
  };

  const router = Router();
  router.use('/.well-known/oauth-protected-resource', (request: Request, response: Response, next: NextFunction) => {
    // Only the bare path here; `/.well-known/oauth-protected-resource/mcp` is the SDK's.
    if (request.path !== '/') {
      next();
      return;
    }
    current().protectedResource(request, response, next);
  });
  // Client secrets are stored hashed: the SDK compares the stored value with the one sent, so the
  // one sent is hashed first.
  router.use(['/token', '/revoke'], express.urlencoded({ extended: false, limit: '16kb' }), (request: Request, _response: Response, next: NextFunction) => {
    const body = request.body as Record<string, unknown> | undefined;
    if (body !== undefined && typeof body.client_secret === 'string') body.client_secret = hashSecret(body.client_secret);
    next();
  });
  // The sign-in form posts to the page's own URL: the authorization request stays in the query,
  // the body carries only `signInCode`.
  router.post('/authorize', express.urlencoded({ extended: false, limit: '16kb' }), (request: Request, _response: Response, next: NextFunction) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const query = Object.fromEntries(Object.entries(request.query).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    request.body = { ...body, ...query };
    next();
  });
  router.use((request: Request, response: Response, next: NextFunction) => current().auth(request, response, next));

  router.post(
    '/mcp',
    (request: Request, response: Response, next: NextFunction) => {
      response.set('Cache-Control', 'no-store');
      if (responseMode(request.headers.accept) === undefined) {
        jsonRpcError(response, 406, -32000, 'Not Acceptable: the Accept header must include application/json or text/event-stream');
        return;
      }
      next();
    },
    (request: Request, response: Response, next: NextFunction) => current().bearer(request, response, next),
    (request: Request, response: Response) => serveMcp(deps, tools, request, response),
  );
  router.all('/mcp', (_request: Request, response: Response) => {
    jsonRpcError(response, 405, -32000, 'Method not allowed: this endpoint is stateless; send JSON-RPC messages with POST', { Allow: 'POST' });
  });
  return router;
}

async function serveMcp(deps: AssistantDependencies, tools: ReturnType<typeof toolsOf>, request: Request, response: Response): Promise<void> {
  const state = stateOf(response);
  const principal = mcpPrincipalOf(request.auth);
  if (principal === undefined) throw new Error('bearer authentication left no principal');
  // The access log names the tenant and the grant (never the token).
  state.principal = asOperationPrincipal(principal);
  const mode = responseMode(request.headers.accept);
  const server = createMcpServer(deps, tools, principal, state.requestId);
  const transport = deps.createTransport?.({ enableJsonResponse: mode === 'json' }) ?? new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: mode === 'json', maxRequestBodySize: maxBodyBytes });
  response.on('close', () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  try {
    await server.connect(transport);
    // The SDK's transport insists on both types; the choice between them was made above.
    request.headers.accept = 'application/json, text/event-stream';
    await transport.handleRequest(request as IncomingMessage, response as ServerResponse);
  } catch (error) {
    deps.logger.error({ err: error, requestId: state.requestId }, 'mcp transport failed');
    if (response.headersSent) response.destroy();
    else jsonRpcError(response, 500, -32603, 'Internal error');
  }
}
