/**
 * The specification's problem codes and the HTTP status of each, in the order the OpenAPI document
 * lists them. Their human text, by language, is src/api/problems/problemCatalogue.ts.
 */
export const problemStatuses = {
  'common.invalid_request': 400,
  'api_keys.invalid': 401,
  'api_keys.scope_missing': 403,
  'common.forbidden': 403,
  'catalog.item_not_found': 404,
  'inventory.box_not_found': 404,
  'orders.not_found': 404,
  'common.not_found': 404,
  'common.method_not_allowed': 405,
  'common.payload_too_large': 413,
  'common.request_header_too_large': 431,
  'common.request_timeout': 408,
  'common.expectation_failed': 417,
  'common.too_many_requests': 429,
  'common.internal_error': 500,
  'common.service_unavailable': 503,
} as const;

export type ProblemCode = keyof typeof problemStatuses;

export const problemCodes = Object.keys(problemStatuses) as ProblemCode[];

/** Why a request was invalid: each has a detail that helps the caller fix it (in the catalogue). */
export const invalidRequestCauses = ['parameter', 'repeated', 'limit', 'cursor', 'status', 'metric', 'date', 'date_plus', 'window', 'window_range', 'window_length', 'granularity', 'period', 'http', 'body_fields', 'body', 'parameters'] as const;
export type InvalidRequestCause = (typeof invalidRequestCauses)[number];

/**
 * The one error type of the service's answers (/v1, downloads, the assistant's tools): a stable
 * specification code, mapped to a problem document in one place (src/api/problems). `cause`,
 * `name` and `allowed` (the values an enum parameter takes) only refine the human detail.
 */
export type InvalidRequest = { readonly cause: InvalidRequestCause; readonly name?: string; readonly allowed?: readonly string[] };

export class ApiError extends Error {
  readonly code: ProblemCode;
  readonly invalid: InvalidRequest | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ProblemCode, options: { invalid?: InvalidRequest; headers?: Record<string, string> } = {}) {
    super(code);
    this.name = 'ApiError';
    this.code = code;
    this.invalid = options.invalid;
    this.headers = options.headers ?? {};
  }
}

export function invalidRequest(cause: InvalidRequestCause, name?: string, allowed?: readonly string[]): ApiError {
  return new ApiError('common.invalid_request', { invalid: { cause, ...(name === undefined ? {} : { name }), ...(allowed === undefined ? {} : { allowed }) } });
}

/**
 * 503 `common.service_unavailable`: the one rule for its headers, wherever it is answered (a change
 * feed whose read model is being rebuilt, a read while no database can be reached). Like 429 it
 * says when to come back: `Retry-After`, in whole seconds (at least 1).
 */
export function serviceUnavailable(retryAfterSeconds: number): ApiError {
  return new ApiError('common.service_unavailable', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
}

/** How long a client waits before retrying a read that found no database (a failover takes about Patroni's ttl). */
export const databaseUnavailableRetrySeconds = 5;
