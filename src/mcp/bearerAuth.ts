import type { RequestHandler, Response } from 'express';
import { InvalidTokenError, OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
// The SDK's bearer middleware is replaced here; its module still declares `request.auth`.
import type { BearerAuthMiddlewareOptions as _DeclaresRequestAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { databaseUnavailableRetrySeconds } from '../platform/errors.js';
import type { Logger } from '../platform/logger.js';
import { clientAddress, type failedAttemptGuard } from './addressLimits.js';
import { sameResource } from './loopback.js';
import { isStoreUnavailable } from './oauthProvider.js';

export type BearerOptions = {
  readonly verifier: OAuthTokenVerifier;
  /** The resource a token must have been issued for (loopback aliases count as the same). */
  readonly resourceUrl: URL;
  readonly resourceMetadataUrl: string;
  /** Offered in the challenge (`scope=`), as the MCP authorization specification asks. */
  readonly scopes: readonly string[];
  readonly failures: ReturnType<typeof failedAttemptGuard>;
  readonly logger: Logger;
};

function jsonRpcError(response: Response, status: number, message: string, code = -32000): void {
  response.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * Bearer authentication of /mcp, in place of the SDK's `requireBearerAuth` (whose challenge always
 * names an error and never a scope). Without credentials: 401 with a challenge that carries no
 * error (RFC 6750 §3.1), only `resource_metadata` and `scope`. With a token that is not valid:
 * 401 `invalid_token`, and the failure counts against the client address; an address over its
 * limit is answered 429 before any lookup. A token store that cannot be reached: 503 with
 * Retry-After (the token may be good).
 */
export function bearerAuth(options: BearerOptions): RequestHandler {
  const scope = options.scopes.join(' ');
  const challenge = (error?: { code: string; description: string }) =>
    `Bearer ${error === undefined ? '' : `error="${error.code}", error_description="${error.description}", `}resource_metadata="${options.resourceMetadataUrl}", scope="${scope}"`;

  return async (request, response, next) => {
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    const token = match?.[1];
    if (token === undefined) {
      response.set('WWW-Authenticate', challenge());
      jsonRpcError(response, 401, 'Unauthorized: sign in with OAuth; the WWW-Authenticate header names the protected resource metadata');
      return;
    }
    const address = clientAddress(request);
    const blockedFor = options.failures.blockedFor(address);
    if (blockedFor !== undefined) {
      response.set('Retry-After', String(blockedFor));
      jsonRpcError(response, 429, `Too many requests with invalid tokens from this address; retry in ${blockedFor} seconds`);
      return;
    }
    try {
      const auth = await options.verifier.verifyAccessToken(token);
      if (auth.resource === undefined || !sameResource(auth.resource.href, options.resourceUrl.href)) throw new InvalidTokenError('The access token was not issued for this resource');
      if (typeof auth.expiresAt !== 'number' || auth.expiresAt < Date.now() / 1000) throw new InvalidTokenError('The access token has expired');
      request.auth = auth;
    } catch (error) {
      if (error instanceof InvalidTokenError) {
        await options.failures.fail(address);
        response.set('WWW-Authenticate', challenge({ code: error.errorCode, description: error.message }));
        response.status(401).json(error.toResponseObject());
        return;
      }
      if (isStoreUnavailable(error)) {
        // The token store cannot be reached (a failover, an outage): the token may be good; come back shortly.
        response.set('Retry-After', String(databaseUnavailableRetrySeconds));
        jsonRpcError(response, 503, 'Service unavailable: the token could not be checked because the database cannot be reached; try again shortly');
        return;
      }
      // Nothing internal goes out; the provider logs its own failures.
      if (error instanceof OAuthError) options.logger.error({ err: error }, 'bearer authentication failed');
      jsonRpcError(response, 500, 'Internal error: the token could not be checked; try again later', -32603);
      return;
    }
    next();
  };
}
