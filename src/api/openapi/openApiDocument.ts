import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { maxHeaderSize } from 'node:http';
import { stateMetrics, windowMetrics } from '../../analytics/definitions.js';
import { z } from '../../platform/zodOpenApi.js';
import { problemCatalogue } from '../problems/problemCatalogue.js';
import { maxQueryParameters } from '../queryParameters.js';
import { problemCodes, type ProblemCode } from '../../platform/errors.js';
import type { Operation } from '../v1/operation.js';
import { clientTimeouts } from '../listen.js';
import { maxRequestBodyBytes } from '../requestBodies.js';
import { keyChallenge, maxBodyBytes, requestDeadlineMs } from '../v1/v1Router.js';

/** Revision of this contract document (not the API version, which is the `/v1` in the path). */
export const contractRevision = '1.0.0';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'Per-key budget for the current window.', schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 1_000_000 } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window (0 when exhausted).', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000 } },
  'X-RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 3600 } },
  RateLimit: { description: 'Budget snapshot: `limit=<n>, remaining=<n>, reset=<n>`.', schema: { type: 'string', maxLength: 100, pattern: '^limit=\\d+, remaining=\\d+, reset=\\d+$' } },
  'RateLimit-Policy': { description: 'Policy: `<limit>;w=<window-seconds>`.', schema: { type: 'string', maxLength: 100, pattern: '^\\d+;w=\\d+$' } },
} as const;

const requestIdHeader = {
  'x-request-id': { description: 'The request id: the `X-Request-Id` sent with the request when it was a UUID, otherwise a new UUID.', schema: { type: 'string', format: 'uuid', maxLength: 36 } },
} as const;

/** Longest code a problem document carries: the known ones, with room for codes added later. */
const maxCodeLength = Math.max(100, ...problemCodes.map((code) => code.length));

/** The problem document. `type` is the configured error type base, `/` and the code, so its bound follows the base. */
function problemSchemaFor(errorTypeBase: string) {
  return z
    .object({
      type: z
        .string()
        .url()
        .max(errorTypeBase.length + 1 + maxCodeLength)
        .openapi({ description: 'The error type base followed by `/` and `code`: an identifier, not a page to open.' }),
      title: z.string().max(200).openapi({ description: 'Short summary in the negotiated language.' }),
      status: z.number().int().min(400).max(599).openapi({ format: 'int32', description: 'Repeats the HTTP status.' }),
      detail: z.string().max(1000).openapi({ description: 'Human text in the negotiated language; not a contract.' }),
      // The request line counts toward the server's header size limit (431 beyond it), so no path is longer.
      instance: z.string().max(maxHeaderSize).openapi({ description: 'The request path without its query string.' }),
      code: z
        .string()
        .max(maxCodeLength)
        .openapi({ description: `Stable English identifier; branch on it. New codes may appear. Known codes: ${problemCodes.map((c) => `\`${c}\``).join(', ')}.` }),
      requestId: z.string().max(36).openapi({ description: 'Equals the `x-request-id` response header.' }),
    })
    .strict()
    .openapi('Problem', { description: 'RFC 9457 problem document: exactly these seven fields.' });
}

const keyChallengeHeader = {
  'WWW-Authenticate': { description: `\`${keyChallenge}\`, whatever the key problem.`, schema: { type: 'string', const: keyChallenge } },
} as const;

const etagHeader = {
  ETag: {
    description: 'Strong entity tag over the exact bytes of this body. Send it back in `If-None-Match` to be answered 304 while the answer is unchanged.',
    schema: { type: 'string', maxLength: 100, pattern: '^"[A-Za-z0-9_-]+"$' },
  },
} as const;

const ifNoneMatchParameter = z
  .string()
  .max(4000)
  .regex(/^(\*|(W\/)?"[^"]*"( *, *(W\/)?"[^"]*")*)$/)
  .optional()
  .openapi({
    description:
      'Entity tags of answers already held (`ETag` of an earlier 200, weak or strong, comma-separated). When one matches the current answer, 304 with no body. `*` matches any current answer.',
  });

const languageParameter = z
  .string()
  .max(200)
  .optional()
  .openapi({ description: 'Language of human text (problem `title` and `detail`): `en`, `es` or `pt`, with quality values; anything else is English.', example: 'es-ES, es;q=0.9, en;q=0.5' });

const requestIdParameter = z
  .string()
  .max(100)
  .optional()
  .openapi({ description: 'A UUID to correlate the request; echoed as `x-request-id`. Anything that is not a UUID is replaced by a new one.', format: 'uuid' });

/** Names as inline code, comma-separated: `A`, `B`. */
function codeList(names: readonly string[]): string {
  return names.map((name) => `\`${name}\``).join(', ');
}

const decisions = `
Decisions where the specification leaves a choice ("not shown"), kept additive-friendly:

- **Wrong method** on a known path: 405 \`common.method_not_allowed\` with an \`Allow\` header, before the key is checked. **Unknown path**: 404 \`common.not_found\`, also before the key is checked; so is a path with a trailing slash (routing is strict), a path in another case (routing is case-sensitive: \`/V1/ORDERS\` names nothing) or one that is not valid percent-encoding (it names nothing).
- **401 challenge**: every 401 carries \`WWW-Authenticate: ${keyChallenge}\`, the same for every cause (RFC 9110 asks for a challenge; the answer stays identical whatever went wrong, so it names no \`error\`).
- **Requests that cannot be parsed** (headers over the server's limit, a malformed \`Content-Length\`): 431 \`common.request_header_too_large\` or 400 \`common.invalid_request\`, with \`instance\` \`/\` and the connection closed. **Slow clients**: request line and headers must arrive within ${clientTimeouts.headersMs / 1000} s and the whole request within ${clientTimeouts.requestMs / 1000} s, otherwise 408 \`common.request_timeout\` (same form) and the connection closed; an idle keep-alive connection is closed after ${clientTimeouts.keepAliveMs / 1000} s.
- **The database unreachable** (a failover under way, an outage): 503 \`common.service_unavailable\` with \`Retry-After\`, like a 429 says when to come back; retry then. **Unexpected failures** (a database too slow among them): 500 \`common.internal_error\`. No request runs longer than ${requestDeadlineMs / 1000} s: one still running then is answered 500 \`common.internal_error\`.
- **Request bodies**: no GET operation uses one; the export request reads at most ${maxBodyBytes} bytes, and no path of this service reads more than ${maxRequestBodyBytes} bytes (the largest body it takes, a batch of the assistant endpoint). A body declared larger (\`Content-Length\`) answers 413 \`common.payload_too_large\` at once, on any path and before the key is checked, without reading it, and the connection is closed; a chunked body is read up to the limit and refused the same way. \`Expect: 100-continue\` gets \`100 Continue\` only once the body is about to be read: a body declared over the limit gets the 413 instead, a request answered without reading its body gets its answer. Any other expectation answers 417 \`common.expectation_failed\`. A body that is not valid JSON where one is read answers 400 \`common.invalid_request\`.
- **Unknown query parameters** are ignored; a documented parameter sent twice answers 400 \`common.invalid_request\`, and so does a query string of more than ${maxQueryParameters} parameters to an operation that reads any (none of them is read, rather than those past the ${maxQueryParameters}th lost).
- **Order of checks**: key (401), scope (403), request budget (429), then parameters (400) and the resource (404). A request that passes the key and scope checks uses the budget whatever its answer, and carries the rate-limit headers.
- **Cursors** are signed and bound to the operation and the workspace that issued them.
- **Change feeds** (\`GET /v1/orders/changes\`, \`GET /v1/fulfillments/changes\`, \`GET /v1/inventory/balances/changes\`): beside each paginated list, the items changed after a \`cursor\`, ordered by the event-log position of their last change, each once and in the list's representation. The envelope is the list envelope plus \`syncCursor\`, always present: the cursor to save (the same one when nothing changed). No cursor means from the beginning. A cursor is a log position, so it survives a rebuild of the read model; while a rebuild of a read model built before positions existed serves, a feed answers 503 \`common.service_unavailable\` with \`Retry-After\`. Feeds take no filters (an item leaving a filter would be lost).
- **Lists that are not paginated** ignore \`limit\` and \`cursor\` and answer one terminal page.
- **Box record**: \`serials\` are the serials registered with the box; \`expiresOn\` is a calendar date.
- **Fulfillment statuses**: \`dispatched\`, \`in_transit\`, \`exception\`, \`delivered\`, \`received\`, \`partially_received\`, \`closed\`.
- **Analytics metric keys**: ${codeList(stateMetrics)} (state at \`asOf\`) and ${codeList(windowMetrics)} (over a window). Each has a \`definition\` and a \`definitionVersion\`. The single-metric answer has \`value\` (the headline figure) and \`breakdown\` (rows of a multi-row metric, each with \`dimension\` and a localized \`label\`).
- **Analytics windows** are whole UTC days. \`from\` and \`to\` take ISO 8601 complete dates (calendar \`2026-10-01\`, week \`2026-W40-4\` or ordinal \`2026-274\`; extended or basic format, not mixed), optionally with a time of day of at least hours and minutes and \`Z\` or an offset (without one, UTC), exactly the parameters' \`pattern\`; reduced precision (\`2026-10\`), hours alone and \`24:00\` are refused. They name instants (write an offset's \`+\` as \`%2B\`); \`from\` must be earlier than \`to\`. The window is the smallest run of whole UTC days covering [\`from\`, \`to\`): it starts at 00:00 UTC of the UTC day holding \`from\` and ends at \`to\` when that is 00:00 UTC, otherwise at the 00:00 UTC after it (so \`2026-11-01T14:30:00+02:00\` as \`from\` starts the window at \`2026-11-01T00:00:00Z\`, and as \`to\` ends it at \`2026-11-02T00:00:00Z\`). The answer's \`window\` gives the days used; they must lie between \`0001-01-01T00:00:00Z\` and \`9999-12-31T00:00:00Z\` (a window reaching outside, such as \`from=0000-12-30\` or \`to=9999-12-31T12:00:00Z\`, is 400 \`common.invalid_request\`: Postgres has no year 0, and a later end has no four-digit year), and the 366-day limit of the consumption trend applies to them. Without them, the 30 UTC days ending with today (today so far included). State metrics validate \`from\`/\`to\` and are not changed by them. The briefing's \`daily\` period is today so far, \`weekly\` today and the six days before.
- **Approval-backlog, cycle-time and clinic comparison** take no parameters; cycle time covers the default window (\`GET /v1/analytics/metrics/ORDER_CYCLE_TIME\` takes another). Consumption-trend points are sparse (periods without consumption are left out) and weeks are ISO weeks clipped to the window.
- **Exceptions**: \`drillDownType\` is \`order\`, \`fulfillment\`, \`box\` or \`catalog_item\`; \`reference\` has one shape per \`metric\`; priorities are fixed per kind (delivery exception 90, expired stock 80, expiring within 7 days 70, stock-out 65, low stock 55, receipt discrepancy 50, expiring later 45, approval waiting 72 h or more 40, other approvals 30), ties broken by \`detectedAt\` then \`drillDownId\`. Each exception's \`evidenceId\` is that of its metric.
- **Scan caps** behind \`truncated\`, configurable per deployment: exceptions listed (default 500), clinics compared (1000), daily consumption rows read (20 000), rows counted by a count metric (100 000), pending approvals read for the backlog (100 000). When a cap is reached, counts are lower bounds and lists a prefix in their documented order.
- **Evidence**: every analytics answer's \`evidenceId\` is stored with the figure it names. The same request at the same projection checkpoint and \`asOf\` gives the same id; labels and language never enter it.
- **Exports**: the request body is optional and read as JSON whatever its Content-Type; a blank body is \`{}\`, and any field but \`period\` is a 400. The 202 answer carries \`Location\` (the poll URL) and the additive \`requestedAt\`; a ready job also has \`asOf\`, the time its briefing was computed at. A failed build is retried automatically: three runs in all, 1 s and 2 s apart; after the third, \`failed\` is final. Jobs answer 404 from exactly 7 days after \`requestedAt\`. The CSV's labels follow the \`Accept-Language\` of the POST. \`downloadUrl\` is either a presigned S3 link or, without S3, a link to this service signed with HMAC-SHA256; neither needs a key. An expired or altered link of this service answers the same 404 \`common.not_found\` whatever was changed; S3 links answer S3's own 403 when expired.
- **Conditional requests**: every 200 answer of a GET carries a strong \`ETag\` computed over its body bytes; a GET whose \`If-None-Match\` lists that tag (weak comparison, RFC 9110) answers 304 with no body, after the key, scope and budget checks, with the same \`ETag\`, budget and rate-limit headers as the 200. \`If-None-Match: *\` matches any current answer (so 304), never an error answer, and no answer outside \`/v1\` is ever 304. Answers stay \`Cache-Control: no-store\`: the client keeps the tag, no shared cache does.
- **The assistant endpoint** \`/mcp\` is not part of this document: AI assistants sign in there as a member with OAuth (its own metadata at \`/.well-known/oauth-protected-resource/mcp\` and \`/.well-known/oauth-authorization-server\`). An API key is refused there, and its tokens are refused here (401 \`api_keys.invalid\`). Its tools run these read operations with the same parameter names and answers.
- **Every answer** carries \`x-request-id\` and \`X-Content-Type-Options: nosniff\`; every /v1 answer carries \`Cache-Control: no-store\`.
`;

export type OpenApiOptions = { readonly serverUrl: string; readonly errorTypeBase: string };

/** The OpenAPI 3.1 document of /v1, generated from the operations' own zod schemas. */
export function buildOpenApiDocument(operations: readonly Operation[], options: OpenApiOptions): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svc_test_<24 letters and digits>_<4 letters and digits>',
    description:
      'An API key in `Authorization: Bearer <API_KEY>`, sent exactly as issued. No other transport is accepted. Each operation names the scope the key must hold in `x-required-scope` (none for `GET /v1/me`).',
  });
  const problemSchema = problemSchemaFor(options.errorTypeBase);
  registry.register('Problem', problemSchema);
  for (const operation of operations) {
    registry.registerPath({
      method: operation.method,
      path: operation.path,
      operationId: operation.operationId,
      tags: [operation.tag],
      summary: operation.summary,
      description: `${operation.description}\n\nScope: ${operation.scope === null ? 'any valid key' : `\`${operation.scope}\``}.`,
      security: [{ [bearer.name]: [] }],
      // The scope the key must hold, machine-readable (absent for `GET /v1/me`: any valid key).
      ...(operation.scope === null ? {} : { 'x-required-scope': operation.scope }),
      request: {
        ...(operation.params ? { params: operation.params } : {}),
        ...(operation.query ? { query: operation.query } : {}),
        ...(operation.body
          ? { body: { required: false, description: 'Optional JSON body.', content: { 'application/json': { schema: operation.body } } } }
          : {}),
        headers: z.object({
          'Accept-Language': languageParameter,
          'X-Request-Id': requestIdParameter,
          ...(operation.method === 'get' ? { 'If-None-Match': ifNoneMatchParameter } : {}),
        }),
      },
      responses: responsesOf(operation, options.errorTypeBase, problemSchema),
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Dental Supply Read API',
      version: contractRevision,
      description: `Read-only JSON API over the supply, stock and ordering data of a dental clinic organisation. \`info.version\` is the revision of this document, not the API version.\n${decisions}`,
      contact: { name: 'support', email: 'support@dental-supply.example' },
      // A name only: reference pages turn an identifier or a URL into a link to another site.
      license: { name: 'Proprietary' },
    },
    servers: [serverOf(options.serverUrl)],
    security: [{ [bearer.name]: [] }],
    tags: [...new Set(operations.map((operation) => operation.tag))].map((name) => ({ name })),
  });
}

/**
 * The one server: this deployment. `/v1` is the public API for server-side integrations
 * (`x-internal: false`). A relative `/` is the origin the document was loaded from (OpenAPI 3.1
 * resolves it against the document's URL); a loopback address is a local development server, any
 * other address the live service, whose keys read the workspace's real data.
 */
function serverOf(url: string): { url: string; description: string; 'x-internal': boolean } {
  const host = URL.canParse(url) ? new URL(url).hostname : undefined;
  const local = host === 'localhost' || host === '[::1]' || (host !== undefined && /^127\./.test(host));
  const description =
    host === undefined
      ? 'This service, at the address this document was loaded from (PUBLIC_BASE_URL, when set, is named here instead).'
      : local
        ? 'Local development server (this process).'
        : 'Production: this deployment at its public address; every key reads real data.';
  return { url, description, 'x-internal': false };
}

type ProblemSchema = ReturnType<typeof problemSchemaFor>;

function problemResponse(codes: readonly ProblemCode[], errorTypeBase: string, problemSchema: ProblemSchema, headers: Record<string, unknown>): ResponseConfig {
  const described = codes.map((code) => `\`${code}\` (${problemCatalogue[code].title.en})`).join(' or ');
  const first = codes[0] ?? 'common.internal_error';
  return {
    description: `Problem document: ${described}.`,
    headers: { ...requestIdHeader, ...headers } as ResponseConfig['headers'],
    content: {
      'application/problem+json': {
        schema: problemSchema,
        example: {
          type: `${errorTypeBase}/${first}`,
          title: problemCatalogue[first].title.en,
          status: problemCatalogue[first].status,
          detail: problemCatalogue[first].detail.en,
          instance: '/v1/…',
          code: first,
          requestId: '3f1c2a9e-6d0b-4a51-9b7e-2f4c8d1e5a60',
        },
      },
    },
  };
}

function responsesOf(operation: Operation, errorTypeBase: string, problemSchema: ProblemSchema): Record<string, ResponseConfig> {
  const byStatus = new Map<number, ProblemCode[]>();
  const codes: ProblemCode[] = [
    ...operation.problems,
    'api_keys.invalid',
    'common.payload_too_large',
    ...(operation.scope === null ? [] : (['api_keys.scope_missing'] as const)),
    'common.forbidden',
    'common.too_many_requests',
    'common.internal_error',
    'common.service_unavailable',
  ];
  for (const code of new Set(codes)) {
    const status = problemCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, ResponseConfig> = {
    [operation.method === 'post' ? '202' : '200']: {
      description: 'Success.',
      headers: {
        ...requestIdHeader,
        ...rateLimitHeaders,
        ...(operation.method === 'get' ? etagHeader : {}),
        ...(operation.location === undefined ? {} : { Location: { description: 'Path of what was created (its poll URL).', schema: { type: 'string', format: 'uri-reference', maxLength: 300 } } }),
      } as ResponseConfig['headers'],
      // Named, so that list envelopes appear among the components (and rules can address them).
      content: { 'application/json': { schema: operation.response.openapi(operation.responseName) } },
    },
  };
  if (operation.method === 'get') {
    responses['304'] = {
      description: 'Not modified: `If-None-Match` matched the current answer. No body; the same `ETag`, budget and rate-limit headers as a 200 (the request used the budget).',
      headers: { ...requestIdHeader, ...rateLimitHeaders, ...etagHeader } as ResponseConfig['headers'],
    };
  }
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // 401, 403 and 413 use no budget and carry no rate-limit headers; every later answer does.
    const budgeted = status !== 401 && status !== 403 && status !== 413 && status !== 500;
    const headers =
      status === 429
        ? { ...rateLimitHeaders, 'Retry-After': { description: 'Seconds until another request is allowed.', schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 3600 } } }
        : status === 503
          ? { 'Retry-After': { description: 'Seconds after which to try again (the same rule as 429).', schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 3600 } } }
        : status === 401
          ? keyChallengeHeader
          : budgeted
            ? rateLimitHeaders
            : {};
    responses[String(status)] = problemResponse(statusCodes, errorTypeBase, problemSchema, headers);
  }
  return responses;
}
