import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidGrantError, InvalidScopeError, InvalidTargetError, InvalidTokenError, OAuthError, TemporarilyUnavailableError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { issuableScopes } from '../keys/scopes.js';
import { isoUtc, type Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import { isDatabaseUnreachable } from '../platform/primaryLocator.js';
import { generateToken, hashSecret, isWellFormedToken, normalizeSignInCode } from './credentials.js';
import { sameResource } from './loopback.js';
import {
  consumeAuthorizationCode,
  consumeSignInCode,
  findClient,
  findCodeChallenge,
  findUsableAccessToken,
  grantMayContinue,
  insertClient,
  insertGrantWithCode,
  insertTokens,
  memberMaySignIn,
  revokeClientToken,
  revokeGrant,
  rotateRefreshToken,
  type ClientRow,
  type GrantRow,
} from './oauthStore.js';
import { renderSignInPage, signInPagePolicy } from './signInPage.js';
import type { McpPrincipal } from './mcpPrincipal.js';

export const accessTokenSeconds = 15 * 60;
export const refreshTokenSeconds = 30 * 24 * 60 * 60;
export const authorizationCodeSeconds = 60;

export type OAuthProviderDependencies = {
  readonly pool: DatabasePool;
  readonly clock: Clock;
  /** The URL of /mcp: the one resource tokens are issued for. */
  readonly resourceUrl: () => URL;
  readonly logger: Logger;
};

function clientInformation(row: ClientRow): OAuthClientInformationFull {
  return {
    ...(row.metadata as Partial<OAuthClientInformationFull>),
    client_id: row.clientId,
    client_id_issued_at: Math.floor(Date.parse(row.createdAt) / 1000),
    redirect_uris: row.redirectUris,
    // The stored hash stands in for the secret: requests to /token and /revoke have their
    // client_secret replaced by its hash before the SDK compares them (see hashClientSecret).
    ...(row.clientSecretHash === null ? {} : { client_secret: row.clientSecretHash }),
    ...(row.clientSecretExpiresAt === null ? {} : { client_secret_expires_at: Math.floor(Date.parse(row.clientSecretExpiresAt) / 1000) }),
  };
}

/**
 * The authorization server behind the SDK's `mcpAuthRouter`, on Postgres: dynamic registration,
 * the sign-in page, authorization codes with PKCE S256, rotating refresh tokens and revocation.
 */
export function createOAuthProvider(deps: OAuthProviderDependencies): OAuthServerProvider {
  const now = () => isoUtc(deps.clock.now());

  const clientsStore: Required<OAuthRegisteredClientsStore> = {
    getClient: async (clientId) => {
      const row = await findClient(deps.pool, clientId);
      return row === undefined ? undefined : clientInformation(row);
    },
    registerClient: async (client) => {
      // The SDK's registration handler generates the id (and a secret for confidential clients).
      const generated: Partial<OAuthClientInformationFull> = client;
      const clientId = generated.client_id ?? randomUUID();
      const { client_secret: secret, client_secret_expires_at: secretExpiresAt, client_id: _id, client_id_issued_at: _issuedAt, ...metadata } = generated;
      const createdAt = now();
      await insertClient(deps.pool, {
        clientId,
        clientSecretHash: secret === undefined ? null : hashSecret(secret),
        clientSecretExpiresAt: secret === undefined || secretExpiresAt === undefined || secretExpiresAt === 0 ? null : isoUtc(secretExpiresAt * 1000),
        redirectUris: client.redirect_uris,
        metadata,
        createdAt,
      });
      // The only time the secret is shown.
      return { ...client, client_id: clientId, client_id_issued_at: Math.floor(Date.parse(createdAt) / 1000) };
    },
  };

  async function issueTokens(db: CommonQueryMethods, grant: GrantRow, scopes: readonly string[]): Promise<OAuthTokens> {
    const at = deps.clock.now();
    const access = generateToken('access');
    const refresh = generateToken('refresh');
    await insertTokens(
      db,
      grant,
      [
        { tokenHash: hashSecret(access), kind: 'access', scopes, expiresAt: isoUtc(at.getTime() + accessTokenSeconds * 1000) },
        { tokenHash: hashSecret(refresh), kind: 'refresh', scopes, expiresAt: isoUtc(at.getTime() + refreshTokenSeconds * 1000) },
      ],
      isoUtc(at),
    );
    return { access_token: access, token_type: 'Bearer', expires_in: accessTokenSeconds, refresh_token: refresh, scope: scopes.join(' ') };
  }

  return loggingFailures(deps.logger, {
    clientsStore,

    async authorize(client, params, response) {
      // Checked before the SDK's handler already (oauthRequests); kept here so that no path skips it.
      if (!client.redirect_uris.includes(params.redirectUri)) {
        response.status(400).json({ error: 'invalid_request', error_description: 'redirect_uri must equal one of the redirect URIs the client registered' });
        return;
      }
      if (params.resource !== undefined && !sameResource(params.resource.href, deps.resourceUrl().href)) {
        throw new InvalidTargetError('This server issues tokens for its /mcp endpoint only');
      }
      const scopes = grantedScopes(params);
      const request = response.req as Request;
      const redirect = (query: Record<string, string>) => {
        const target = new URL(params.redirectUri);
        for (const [name, value] of Object.entries(query)) target.searchParams.set(name, value);
        if (params.state !== undefined) target.searchParams.set('state', params.state);
        response.redirect(302, target.href);
      };
      const page = (status: number, error?: string) => {
        response.status(status);
        response.set('Content-Security-Policy', signInPagePolicy(params.redirectUri));
        response.set('X-Frame-Options', 'DENY');
        response.type('html').send(
          renderSignInPage({
            clientName: client.client_name ?? client.client_id,
            clientId: client.client_id,
            redirectHost: new URL(params.redirectUri).host,
            scopes,
            action: request.originalUrl,
            ...(error === undefined ? {} : { error }),
          }),
        );
      };
      if (request.method !== 'POST') {
        page(200);
        return;
      }
      // Read from the form body only (oauthRequests put nothing else there).
      const form = (request.body ?? {}) as Record<string, unknown>;
      if (form.decision === 'deny') {
        redirect({ error: 'access_denied', error_description: 'The member declined to let this app read the workspace' });
        return;
      }
      const code = typeof form.signInCode === 'string' ? normalizeSignInCode(form.signInCode) : undefined;
      const signedIn = code === undefined ? undefined : await consumeSignInCode(deps.pool, hashSecret(code), now());
      if (signedIn === undefined) {
        page(400, 'That sign-in code is not valid, has expired or was already used. Ask the console for a new one.');
        return;
      }
      if (!(await memberMaySignIn(deps.pool, signedIn.tenantId, signedIn.memberId))) {
        page(400, 'This account cannot sign in at the moment. Ask your workspace administrator.');
        return;
      }
      const authorizationCode = generateToken('code');
      const createdAt = deps.clock.now();
      await insertGrantWithCode(
        deps.pool,
        {
          tenantId: signedIn.tenantId,
          grantId: randomUUID(),
          memberId: signedIn.memberId,
          clientId: client.client_id,
          scopes,
          resource: deps.resourceUrl().href,
          createdAt: isoUtc(createdAt),
        },
        {
          codeHash: hashSecret(authorizationCode),
          redirectUri: params.redirectUri,
          codeChallenge: params.codeChallenge,
          expiresAt: isoUtc(createdAt.getTime() + authorizationCodeSeconds * 1000),
        },
      );
      redirect({ code: authorizationCode });
    },

    async challengeForAuthorizationCode(client, authorizationCode) {
      if (!isWellFormedToken('code', authorizationCode)) throw new InvalidGrantError('The authorization code is not valid');
      const challenge = await findCodeChallenge(deps.pool, hashSecret(authorizationCode), client.client_id);
      if (challenge === undefined) throw new InvalidGrantError('The authorization code is not valid');
      return challenge;
    },

    async exchangeAuthorizationCode(client, authorizationCode, _codeVerifier, redirectUri, resource) {
      if (!isWellFormedToken('code', authorizationCode)) throw new InvalidGrantError('The authorization code is not valid');
      const grant = await consumeAuthorizationCode(deps.pool, {
        codeHash: hashSecret(authorizationCode),
        clientId: client.client_id,
        redirectUri,
        now: now(),
      });
      if (grant === undefined) throw new InvalidGrantError('The authorization code is not valid, has expired or was already used');
      if (resource !== undefined && !sameResource(resource.href, grant.resource)) throw new InvalidTargetError('The resource does not match the authorization');
      return issueTokens(deps.pool, grant, grant.scopes);
    },

    async exchangeRefreshToken(client, refreshToken, scopes, resource) {
      if (!isWellFormedToken('refresh', refreshToken)) throw new InvalidGrantError('The refresh token is not valid');
      const at = now();
      const tokens = await rotateRefreshToken(deps.pool, { tokenHash: hashSecret(refreshToken), clientId: client.client_id, now: at }, async (db, grant, tokenScopes) => {
        if (resource !== undefined && !sameResource(resource.href, grant.resource)) throw new InvalidTargetError('The resource does not match the authorization');
        if (scopes !== undefined && scopes.some((scope) => !tokenScopes.includes(scope))) throw new InvalidScopeError('A refresh can only keep or narrow the scopes');
        // A suspension (or removal) of the member or the workspace ends the grant, even once undone.
        if (!(await grantMayContinue(db, grant.tenantId, grant.grantId))) {
          await revokeGrant(db, grant.tenantId, grant.grantId, at);
          return undefined;
        }
        return issueTokens(db, grant, scopes ?? tokenScopes);
      });
      if (tokens === undefined) throw new InvalidGrantError('The refresh token is not valid, has expired or was already used');
      return tokens;
    },

    async verifyAccessToken(token): Promise<AuthInfo> {
      // A token of another format or with a wrong checksum costs no lookup.
      if (!isWellFormedToken('access', token)) throw new InvalidTokenError('The access token is not valid');
      const row = await findUsableAccessToken(deps.pool, hashSecret(token), now());
      if (row === undefined) throw new InvalidTokenError('The access token is not valid');
      const principal: McpPrincipal = {
        tenantId: row.tenantId,
        memberId: row.memberId,
        grantId: row.grantId,
        scopes: row.scopes,
        permissions: row.permissions,
      };
      return {
        token,
        clientId: row.clientId,
        scopes: row.scopes,
        expiresAt: Math.floor(Date.parse(row.expiresAt) / 1000),
        resource: new URL(row.resource),
        extra: { principal },
      };
    },

    async revokeToken(client, request: OAuthTokenRevocationRequest) {
      // RFC 7009: a token that is not ours is ignored, and answered like any other.
      if (!isWellFormedToken('access', request.token) && !isWellFormedToken('refresh', request.token)) return;
      await revokeClientToken(deps.pool, { tokenHash: hashSecret(request.token), clientId: client.client_id, now: now() });
    },
  });
}

/**
 * Whether a failure of the OAuth store means it cannot be reached (a failover, an outage): the
 * provider's own `temporarily_unavailable` (loggingFailures), or the database's error where it
 * reaches a caller directly. Answered 503 with Retry-After, never as the client's fault.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof TemporarilyUnavailableError || isDatabaseUnreachable(error);
}

/**
 * The provider with every failure that is not an OAuth answer logged: a statement failing, which
 * the SDK turns into a bare 500 `server_error`; the store unreachable (a failover, an outage),
 * which becomes `temporarily_unavailable` (answered 503 with Retry-After by oauthRoutes, or in the
 * redirect where /authorize redirects).
 */
function loggingFailures(logger: Logger, provider: OAuthServerProvider & { clientsStore: Required<OAuthRegisteredClientsStore> }): OAuthServerProvider {
  const logged =
    <A extends unknown[], R>(operation: string, run: (...args: A) => R | Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await run(...args);
      } catch (error) {
        if (error instanceof OAuthError) throw error;
        if (isDatabaseUnreachable(error)) {
          logger.warn({ err: error, operation }, 'oauth store unreachable');
          throw new TemporarilyUnavailableError('The authorization server is unavailable for a moment; try again shortly');
        }
        logger.error({ err: error, operation }, 'oauth store failed');
        throw error;
      }
    };
  return {
    clientsStore: {
      getClient: logged('getClient', provider.clientsStore.getClient),
      registerClient: logged('registerClient', provider.clientsStore.registerClient),
    },
    authorize: logged('authorize', provider.authorize),
    challengeForAuthorizationCode: logged('challengeForAuthorizationCode', provider.challengeForAuthorizationCode),
    exchangeAuthorizationCode: logged('exchangeAuthorizationCode', provider.exchangeAuthorizationCode),
    exchangeRefreshToken: logged('exchangeRefreshToken', provider.exchangeRefreshToken),
    verifyAccessToken: logged('verifyAccessToken', provider.verifyAccessToken),
    revokeToken: logged('revokeToken', provider.revokeToken ?? (async () => undefined)),
  };
}

/** The scopes asked for, or the seven /v1 scopes when none are; any other scope is refused. */
function grantedScopes(params: AuthorizationParams): string[] {
  const requested = (params.scopes ?? []).filter((scope) => scope !== '');
  if (requested.length === 0) return [...issuableScopes];
  const unknown = requested.find((scope) => !(issuableScopes as readonly string[]).includes(scope));
  if (unknown !== undefined) throw new InvalidScopeError(`Unknown scope: ${unknown}`);
  return issuableScopes.filter((scope) => requested.includes(scope));
}
