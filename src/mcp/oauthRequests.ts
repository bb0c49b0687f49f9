import { databaseUnavailableRetrySeconds } from '../platform/errors.js';
import { timingSafeEqual } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { readBodyWith } from '../api/requestBodies.js';
import { hashSecret } from './credentials.js';
import { isStoreUnavailable } from './oauthProvider.js';

/**
 * Checks in front of the SDK's /authorize, /token and /revoke handlers, where those fall short:
 * the client and its redirect URI are validated before anything else and an error never
 * redirects to an unregistered URI; error redirects keep `state`; the sign-in code is read from the
 * form body only; clients may authenticate with HTTP Basic; every refusal is a sentence, not a
 * dump of a schema's errors. What passes is handed to the SDK's handler unchanged.
 */

type Fields = Record<string, unknown>;

/** Largest form body of /authorize, /token and /revoke. */
export const formBodyBytes = 16 * 1024;

const readForm = express.urlencoded({ extended: false, limit: formBodyBytes });

/** Whether the form could be read; never settles when the body was refused for its size (413 answered already). */
function formOf(request: Request, response: Response): Promise<boolean> {
  return new Promise((resolve) => {
    readBodyWith(readForm, request, response, (error?: unknown) => resolve(error === undefined));
  });
}

function oauthError(response: Response, status: number, error: string, description: string, headers: Record<string, string> = {}): void {
  response.status(status).set({ 'Cache-Control': 'no-store', ...headers }).json({ error, error_description: description });
}

/** The first parameter sent more than once (RFC 6749 §3.1: none may be). */
function repeated(fields: Fields): string | undefined {
  return Object.entries(fields).find(([, value]) => Array.isArray(value))?.[0];
}

function text(fields: Fields, name: string): string | undefined {
  const value = fields[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A store failure: answered 500 `server_error`, or 503 `temporarily_unavailable` with Retry-After
 * when the database cannot be reached (a failover; the provider then throws
 * `temporarily_unavailable`); never a redirect, nothing internal. The store is the provider's,
 * which logs its own failures (oauthProvider's loggingFailures).
 */
function storeFailed(response: Response, error: unknown): void {
  if (isStoreUnavailable(error)) {
    oauthError(response, 503, 'temporarily_unavailable', 'The authorization server is unavailable for a moment; try again shortly', {
      'Retry-After': String(databaseUnavailableRetrySeconds),
    });
    return;
  }
  oauthError(response, 500, 'server_error', 'The authorization server could not complete the request; try again later');
}

const pkceChallenge = /^[A-Za-z0-9_-]{43}$/;

/**
 * GET and POST /authorize. First, answered 400 without a redirect: the client must be registered
 * and the redirect URI one of its registered ones, exactly (or omitted when it has only one).
 * Then, answered by a redirect carrying `state`: the response type, the PKCE challenge (S256) and
 * repeated parameters. The authorization request is read from the query string (the sign-in form
 * posts to the page's own URL); of a POST's form body only `signInCode` and `decision` are read.
 */
export function checkAuthorizationRequest(clients: OAuthRegisteredClientsStore): RequestHandler {
  return async (request, response, next) => {
    if (request.method !== 'GET' && request.method !== 'POST') {
      next();
      return;
    }
    const query = request.query as Fields;
    const form = request.method === 'POST' && (await formOf(request, response)) ? ((request.body ?? {}) as Fields) : {};
    for (const name of ['client_id', 'redirect_uri']) {
      if (Array.isArray(query[name])) {
        oauthError(response, 400, 'invalid_request', `${name} was sent more than once`);
        return;
      }
    }
    const clientId = text(query, 'client_id');
    if (clientId === undefined) {
      oauthError(response, 400, 'invalid_request', 'client_id is missing');
      return;
    }
    let client: OAuthClientInformationFull | undefined;
    try {
      client = await clients.getClient(clientId);
    } catch (error) {
      storeFailed(response, error);
      return;
    }
    if (client === undefined) {
      oauthError(response, 400, 'invalid_client', 'This client is not registered (registrations not used for a long time are deleted): let the app register again');
      return;
    }
    const requested = text(query, 'redirect_uri');
    const redirectUri = requested ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
    if (redirectUri === undefined || !client.redirect_uris.includes(redirectUri)) {
      oauthError(
        response,
        400,
        'invalid_request',
        requested === undefined ? 'redirect_uri is missing and the client registered more than one' : 'redirect_uri must equal one of the redirect URIs the client registered',
      );
      return;
    }

    const state = text(query, 'state');
    const refusal = requestRefusal(query);
    if (refusal !== undefined) {
      const target = new URL(redirectUri);
      target.searchParams.set('error', refusal.error);
      target.searchParams.set('error_description', refusal.description);
      if (state !== undefined) target.searchParams.set('state', state);
      response.set('Cache-Control', 'no-store').redirect(302, target.href);
      return;
    }
    if (request.method === 'POST') {
      // The SDK reads a POST's parameters from the body: the query's, plus what the person typed.
      const decision = typeof form.decision === 'string' ? form.decision : undefined;
      const signInCode = typeof form.signInCode === 'string' ? form.signInCode : undefined;
      const { signInCode: _fromQuery, decision: _decisionFromQuery, ...authorization } = query;
      request.body = { ...authorization, redirect_uri: redirectUri, ...(signInCode === undefined ? {} : { signInCode }), ...(decision === undefined ? {} : { decision }) };
    }
    next();
  };
}

/** Why an authorization request for a known client and redirect URI is refused, in words. */
function requestRefusal(query: Fields): { error: string; description: string } | undefined {
  const twice = repeated(query);
  if (twice !== undefined) return { error: 'invalid_request', description: `${twice} was sent more than once` };
  if (query.response_type !== 'code') return { error: 'unsupported_response_type', description: 'response_type must be code' };
  const challenge = text(query, 'code_challenge');
  if (challenge === undefined) return { error: 'invalid_request', description: 'code_challenge is missing: this server requires PKCE with S256' };
  if (query.code_challenge_method !== 'S256') return { error: 'invalid_request', description: 'code_challenge_method must be S256 (plain is not accepted)' };
  if (!pkceChallenge.test(challenge)) return { error: 'invalid_request', description: 'code_challenge must be the 43-character base64url SHA-256 of the code verifier' };
  const resource = query.resource;
  if (resource !== undefined && (typeof resource !== 'string' || !URL.canParse(resource))) return { error: 'invalid_request', description: 'resource must be an absolute URL' };
  return undefined;
}

/** The realm of the Basic challenge of an `invalid_client` answer to a client that used HTTP Basic. */
const basicChallenge = { 'WWW-Authenticate': 'Basic realm="dental-supply-assistant", charset="UTF-8"' };

/** `client_id:client_secret` of an HTTP Basic header, each form-urlencoded (RFC 6749 §2.3.1). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | 'malformed' | undefined {
  if (header === undefined || !/^Basic\b/i.test(header)) return undefined;
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (match?.[1] === undefined) return 'malformed';
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return 'malformed';
  try {
    const unescape = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

/** Compares two hex hashes in constant time. */
function sameHash(a: string, b: string): boolean {
  const first = Buffer.from(a, 'hex');
  const second = Buffer.from(b, 'hex');
  return first.length === second.length && first.length > 0 && timingSafeEqual(first, second);
}

/**
 * POST /token and /revoke: the form, then client authentication with `client_secret_post` or
 * `client_secret_basic` (or none, for public clients). A failure is `invalid_client` (RFC 6749
 * §5.2), 401 with a Basic challenge when the client used HTTP Basic. The secret is replaced by its
 * hash, which is what the store keeps and what the SDK then compares. Finally the fields the
 * endpoint needs must be there, each once.
 */
export function authenticateClientRequest(clients: OAuthRegisteredClientsStore, endpoint: 'token' | 'revoke'): RequestHandler {
  return async (request, response, next) => {
    if (request.method !== 'POST') {
      next();
      return;
    }
    if (!(await formOf(request, response))) {
      oauthError(response, 400, 'invalid_request', 'The body must be a form (application/x-www-form-urlencoded) of at most 16 KiB');
      return;
    }
    const body = (request.body ?? {}) as Fields;
    request.body = body;
    const twice = repeated(body);
    if (twice !== undefined) {
      oauthError(response, 400, 'invalid_request', `${twice} was sent more than once`);
      return;
    }
    const basic = basicCredentials(request.headers.authorization);
    const refuseClient = (description: string) => oauthError(response, basic === undefined ? 400 : 401, 'invalid_client', description, basic === undefined ? {} : basicChallenge);
    if (basic === 'malformed') {
      refuseClient('The Authorization header must be Basic base64(client_id:client_secret)');
      return;
    }
    if (basic !== undefined) {
      if (body.client_secret !== undefined) {
        oauthError(response, 400, 'invalid_request', 'Authenticate with HTTP Basic or with client_secret in the body, not both');
        return;
      }
      if (body.client_id !== undefined && body.client_id !== basic.id) {
        refuseClient('client_id in the body differs from the one of the Authorization header');
        return;
      }
      body.client_id = basic.id;
      body.client_secret = basic.secret;
    }
    const clientId = text(body, 'client_id');
    if (clientId === undefined) {
      refuseClient('client_id is missing');
      return;
    }
    let client: OAuthClientInformationFull | undefined;
    try {
      client = await clients.getClient(clientId);
    } catch (error) {
      storeFailed(response, error);
      return;
    }
    if (client === undefined) {
      refuseClient('This client is not registered (registrations not used for a long time are deleted): register again');
      return;
    }
    const secret = typeof body.client_secret === 'string' ? body.client_secret : undefined;
    if (client.client_secret !== undefined) {
      // The stored value is the secret's hash (see oauthProvider's clientInformation).
      if (secret === undefined) {
        refuseClient('This client must authenticate with its client_secret');
        return;
      }
      if (!sameHash(hashSecret(secret), client.client_secret)) {
        refuseClient('The client_secret is not valid');
        return;
      }
      if (client.client_secret_expires_at !== undefined && client.client_secret_expires_at !== 0 && client.client_secret_expires_at < Math.floor(Date.now() / 1000)) {
        refuseClient('The client_secret has expired: register the client again');
        return;
      }
      body.client_secret = hashSecret(secret);
    } else {
      delete body.client_secret;
    }
    const missing = missingField(body, endpoint);
    if (missing !== undefined) {
      oauthError(response, 400, 'invalid_request', missing);
      return;
    }
    next();
  };
}

function missingField(body: Fields, endpoint: 'token' | 'revoke'): string | undefined {
  if (endpoint === 'revoke') return text(body, 'token') === undefined ? 'token is missing' : undefined;
  const grantType = text(body, 'grant_type');
  if (grantType === undefined) return 'grant_type is missing';
  if (grantType === 'authorization_code') {
    if (text(body, 'code') === undefined) return 'code is missing';
    if (text(body, 'code_verifier') === undefined) return 'code_verifier is missing';
  }
  if (grantType === 'refresh_token' && text(body, 'refresh_token') === undefined) return 'refresh_token is missing';
  const resource = body.resource;
  if (resource !== undefined && (typeof resource !== 'string' || !URL.canParse(resource))) return 'resource must be an absolute URL';
  return undefined;
}
