import express, { type NextFunction, type Request, type Response } from 'express';
import { OAuthClientMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { readBodyWith } from '../api/requestBodies.js';
import { isLoopbackUrl } from './loopback.js';

/** How a client may authenticate at /token and /revoke (RFC 7591 `token_endpoint_auth_method`). */
export const clientAuthMethods = ['none', 'client_secret_post', 'client_secret_basic'] as const;

/** Bounds of a registration: what a sign-in page shows and what the database keeps stays small. */
export const registrationBounds = {
  bodyBytes: 16 * 1024,
  redirectUris: 10,
  uriLength: 1000,
  clientName: 100,
  text: 200,
  contacts: 5,
} as const;

/**
 * A host name as DNS and IP addresses write it (after the URL parser's lower-casing and punycode):
 * what a `Content-Security-Policy` source can hold as it is (see signInPagePolicy). The URL parser
 * lets through `;`, `'`, `*` and more, which are no host any client listens on.
 */
export const plainHostname = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/;

/**
 * Why a redirect URI is refused, or undefined when it is acceptable: `https`, or `http` on a
 * loopback host (OAuth 2.1 §2.3.1; the MCP authorization specification's "Communication
 * Security"), with no fragment (RFC 6749 §3.1.2), no user name or password, and a plain host.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > registrationBounds.uriLength) return `is longer than ${registrationBounds.uriLength} characters`;
  if (!URL.canParse(uri)) return 'is not an absolute URL';
  const url = new URL(uri);
  if (uri.includes('#')) return 'has a fragment (#…), which a redirect URI must not have';
  if (url.username !== '' || url.password !== '') return 'carries a user name or password';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `uses the scheme ${url.protocol.slice(0, 20)} where only https (or http on a loopback host) is accepted`;
  if (!plainHostname.test(url.hostname)) return 'has a host that is not a DNS name or an IP address (letters, digits, hyphens and dots)';
  if (url.protocol === 'http:' && !isLoopbackUrl(url)) return 'uses plain http on a host other than localhost, 127.0.0.1 or [::1]; use https';
  return undefined;
}

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/** An absolute http or https URL: what a sign-in page may link to or load (never javascript:, data: or file:). */
function isWebUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'https:' || protocol === 'http:';
}

const uri = text(registrationBounds.uriLength).refine(isWebUrl, 'must be an absolute https or http URL');

/** The fields the registration endpoint keeps, bounded; the SDK's handler then parses and stores them. */
const registrationSchema = z
  .object({
    redirect_uris: z
      .array(z.string({ invalid_type_error: 'must be strings' }), { required_error: 'is required', invalid_type_error: 'must be an array of URLs' })
      .min(1, 'must hold at least one URL')
      .max(registrationBounds.redirectUris, `must hold at most ${registrationBounds.redirectUris} URLs`),
    token_endpoint_auth_method: z.enum(clientAuthMethods, { errorMap: () => ({ message: `must be one of ${clientAuthMethods.join(', ')}` }) }).optional(),
    grant_types: z
      .array(z.enum(['authorization_code', 'refresh_token'], { errorMap: () => ({ message: 'may hold only authorization_code and refresh_token' }) }))
      .max(2)
      .optional(),
    response_types: z.array(z.literal('code', { errorMap: () => ({ message: 'may hold only code' }) })).max(1).optional(),
    client_name: text(registrationBounds.clientName)
      .refine((name) => name.trim() !== '', 'must not be blank')
      // eslint-disable-next-line no-control-regex
      .refine((name) => !/[\u0000-\u001f\u007f]/.test(name), 'must not contain control characters')
      .optional(),
    client_uri: uri.optional(),
    logo_uri: uri.optional(),
    tos_uri: uri.optional(),
    policy_uri: uri.optional(),
    jwks_uri: uri.optional(),
    scope: text(registrationBounds.text * 5).optional(),
    contacts: z.array(text(registrationBounds.text)).max(registrationBounds.contacts, `must hold at most ${registrationBounds.contacts} addresses`).optional(),
    software_id: text(registrationBounds.text).optional(),
    software_version: text(registrationBounds.text).optional(),
  })
  .passthrough();

/** Text of an error message fit for one line of `error_description`: no line breaks, at most 200 characters. */
function oneLine(message: string): string {
  return message.replace(/\s+/g, ' ').trim().slice(0, 200);
}

/** RFC 7591 §3.2.2: a refused redirect URI is `invalid_redirect_uri`, any other field `invalid_client_metadata`. */
function refuse(response: Response, error: 'invalid_redirect_uri' | 'invalid_client_metadata', description: string): void {
  response.status(400).set('Cache-Control', 'no-store').json({ error, error_description: description });
}

const readJson = express.json({ limit: registrationBounds.bodyBytes });

/**
 * In front of the SDK's registration handler: a JSON body of at most 16 KiB whose fields are
 * bounded, registered with only its acceptable redirect URIs (refused when it has none); refusals
 * say which field and why.
 */
export function validateRegistration(request: Request, response: Response, next: NextFunction): void {
  readBodyWith(readJson, request, response, (error?: unknown) => {
    if (error !== undefined) {
      const tooLarge = typeof error === 'object' && error !== null && 'type' in error && error.type === 'entity.too.large';
      refuse(response, 'invalid_client_metadata', tooLarge ? `The registration is larger than ${registrationBounds.bodyBytes} bytes` : 'The registration must be a JSON object');
      return;
    }
    const body: unknown = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      refuse(response, 'invalid_client_metadata', 'The registration must be a JSON object (Content-Type: application/json)');
      return;
    }
    const parsed = registrationSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.filter((part) => typeof part === 'string').join('.') ?? 'registration';
      refuse(response, field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', `${field} ${issue?.message ?? 'is not valid'}`);
      return;
    }
    // RFC 7591 §2 lets the server register fewer values than asked for: a client offering several
    // callbacks (Cursor sends a private-scheme one beside https and loopback ones) is registered
    // with the acceptable ones, and the answer lists what was kept. None acceptable: refused.
    const acceptable = parsed.data.redirect_uris.filter((redirectUri) => redirectUriProblem(redirectUri) === undefined);
    const [first = ''] = parsed.data.redirect_uris;
    if (acceptable.length === 0) {
      refuse(response, 'invalid_redirect_uri', `The redirect URI ${JSON.stringify(first.slice(0, 200))} ${redirectUriProblem(first) ?? 'is not acceptable'}`);
      return;
    }
    (body as { redirect_uris: string[] }).redirect_uris = acceptable;
    // What the SDK's handler then parses must pass too; its refusal would be a dump of its schema's errors.
    const sdkParsed = OAuthClientMetadataSchema.safeParse(body);
    if (!sdkParsed.success) {
      const issue = sdkParsed.error.issues[0];
      const field = issue?.path.filter((part) => typeof part === 'string').join('.') || 'registration';
      refuse(response, 'invalid_client_metadata', `${field} is not valid: ${oneLine(issue?.message ?? 'refused')}`);
      return;
    }
    next();
  });
}
