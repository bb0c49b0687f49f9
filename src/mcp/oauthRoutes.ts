import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { createOAuthMetadata, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { limitPerAddress, type AddressLimits } from './addressLimits.js';
import { bodyLimit } from '../api/requestBodies.js';
import { databaseUnavailableRetrySeconds } from '../platform/errors.js';
import { clientAuthMethods, registrationBounds, validateRegistration } from './clientRegistration.js';
import { authenticateClientRequest, checkAuthorizationRequest, formBodyBytes } from './oauthRequests.js';

export type OAuthRouterOptions = {
  readonly provider: OAuthServerProvider;
  readonly issuerUrl: URL;
  readonly resourceUrl: URL;
  readonly scopesSupported: string[];
  readonly resourceName: string;
  readonly limits: AddressLimits;
};

function onlyFor(method: string, handler: RequestHandler): RequestHandler {
  return (request: Request, response: Response, next: NextFunction) => (request.method === method ? handler(request, response, next) : next());
}

/**
 * The SDK's handlers answer every OAuth error that is not `server_error` with 400, so a store that
 * cannot be reached (the provider throws `temporarily_unavailable`, see oauthProvider) would read
 * as the client's fault: its JSON answer goes out as 503 with Retry-After. (Where /authorize
 * redirects, the error travels in the redirect, as RFC 6749 §4.1.2.1 has it.)
 */
function unavailableIs503(_request: Request, response: Response, next: NextFunction): void {
  const json = response.json.bind(response);
  response.json = (body?: unknown) => {
    if (typeof body === 'object' && body !== null && (body as { error?: unknown }).error === 'temporarily_unavailable') {
      response.status(503).set({ 'Retry-After': String(databaseUnavailableRetrySeconds), 'Cache-Control': 'no-store' });
    }
    return json(body);
  };
  next();
}

/**
 * The authorization server of one base URL, made of the SDK's own handlers (what its
 * `mcpAuthRouter` mounts) with, in front of each, the per-address limit (shared through Redis when
 * it is configured, in place of the SDK's per-process ones) and the checks of oauthRequests and
 * clientRegistration. The metadata says what is supported: public clients, `client_secret_post`
 * and `client_secret_basic`, at /token and at /revoke alike.
 */
export function oauthRouter(options: OAuthRouterOptions): Router {
  const { provider, limits, scopesSupported, resourceName } = options;
  const oauthMetadata: OAuthMetadata = {
    ...createOAuthMetadata({ provider, issuerUrl: options.issuerUrl, scopesSupported }),
    token_endpoint_auth_methods_supported: [...clientAuthMethods],
    revocation_endpoint_auth_methods_supported: [...clientAuthMethods],
  };
  const bareProtectedResource = metadataHandler({ resource: options.resourceUrl.href, authorization_servers: [oauthMetadata.issuer], scopes_supported: scopesSupported, resource_name: resourceName });

  const router = Router({ caseSensitive: true });
  router.use(unavailableIs503);
  // The SDK's metadata router matches paths in any case: it is reached only by its own paths, as written.
  const metadata = mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: options.resourceUrl, scopesSupported, resourceName });
  const metadataPaths = ['/.well-known/oauth-authorization-server', `/.well-known/oauth-protected-resource${options.resourceUrl.pathname}`];
  router.use((request: Request, response: Response, next: NextFunction) =>
    metadataPaths.some((path) => request.path === path || request.path.startsWith(`${path}/`)) ? metadata(request, response, next) : next(),
  );
  // RFC 9728 at the root as well: clients that do not append the resource path look there.
  router.use('/.well-known/oauth-protected-resource', (request: Request, response: Response, next: NextFunction) => (request.path === '/' ? bareProtectedResource(request, response, next) : next()));
  // A body over the endpoint's limit is refused at once (413), before the per-address limit counts it.
  router.use('/authorize', bodyLimit(formBodyBytes), limitPerAddress(limits.authorize, 'authorization requests'), checkAuthorizationRequest(provider.clientsStore), authorizationHandler({ provider, rateLimit: false }));
  router.use('/token', bodyLimit(formBodyBytes), limitPerAddress(limits.token, 'token requests'), authenticateClientRequest(provider.clientsStore, 'token'), tokenHandler({ provider, rateLimit: false }));
  router.use(
    '/register',
    bodyLimit(registrationBounds.bodyBytes),
    limitPerAddress(limits.register, 'client registrations'),
    onlyFor('POST', validateRegistration),
    clientRegistrationHandler({ clientsStore: provider.clientsStore, rateLimit: false }),
  );
  router.use('/revoke', bodyLimit(formBodyBytes), limitPerAddress(limits.revoke, 'revocation requests'), authenticateClientRequest(provider.clientsStore, 'revoke'), revocationHandler({ provider, rateLimit: false }));
  return router;
}
