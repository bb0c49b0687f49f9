/** The problem codes of /v1 this version knows (the service may add others: branch on `status` then). */
export const knownProblemCodes = [
  'common.invalid_request',
  'api_keys.invalid',
  'api_keys.scope_missing',
  'common.forbidden',
  'catalog.item_not_found',
  'inventory.box_not_found',
  'orders.not_found',
  'common.not_found',
  'common.method_not_allowed',
  'common.payload_too_large',
  'common.request_header_too_large',
  'common.request_timeout',
  'common.expectation_failed',
  'common.too_many_requests',
  'common.internal_error',
  'common.service_unavailable',
] as const;

/**
 * A problem `code`: one of the known codes, `client.unexpected_response` (an answer that is not a
 * problem document), or a code added by the service after this version (still a string).
 */
export type ProblemCode = (typeof knownProblemCodes)[number] | 'client.unexpected_response' | (string & {});

/**
 * A failed request: the service's problem document (RFC 9457), or, for an answer that is not one
 * (a proxy's error page), `code` `client.unexpected_response` with the HTTP status. Branch on
 * `code`, then on `status` for codes this client does not know.
 */
export class ProblemError extends Error {
  override readonly name = 'ProblemError';
  readonly code: ProblemCode;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** Equals the `x-request-id` response header; quote it to support. */
  readonly requestId: string;
  readonly type: string | undefined;
  readonly instance: string | undefined;

  constructor(problem: { code: ProblemCode; status: number; title: string; detail: string; requestId: string; type?: string; instance?: string }) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.code = problem.code;
    this.status = problem.status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.requestId = problem.requestId;
    this.type = problem.type;
    this.instance = problem.instance;
  }
}

/** The ProblemError of a failed answer; reads (and so consumes) its body. */
export async function problemErrorOf(response: Response): Promise<ProblemError> {
  const requestId = response.headers.get('x-request-id') ?? '';
  const text = await response.text().catch(() => '');
  const body = parseObject(text);
  if (body !== undefined && typeof body.code === 'string' && typeof body.status === 'number') {
    return new ProblemError({
      code: body.code,
      status: body.status,
      title: stringOr(body.title, response.statusText),
      detail: stringOr(body.detail, ''),
      requestId: stringOr(body.requestId, requestId),
      type: stringOr(body.type, ''),
      instance: stringOr(body.instance, ''),
    });
  }
  return new ProblemError({
    code: 'client.unexpected_response',
    status: response.status,
    title: response.statusText || 'Unexpected response',
    detail: `HTTP ${response.status} without a problem document`,
    requestId,
  });
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
