import { describe, expect, test } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi/openApiDocument.js';
import { v1Operations } from '../../src/api/v1/operations.js';
import { createResponseValidator, type ResponseToValidate } from './openApiValidator.js';

const errorTypeBase = 'https://problems.test.example/v1';
const validator = createResponseValidator(buildOpenApiDocument(v1Operations, { serverUrl: 'http://localhost', errorTypeBase }), {
  errorTypeBase,
  unvalidatedPaths: ['/healthz'],
});

const requestId = '3f1c2a9e-6d0b-4a51-9b7e-2f4c8d1e5a60';
const rateLimitHeaders = {
  'x-ratelimit-limit': '120',
  'x-ratelimit-remaining': '119',
  'x-ratelimit-reset': '60',
  ratelimit: 'limit=120, remaining=119, reset=60',
  'ratelimit-policy': '120;w=60',
};

const order = {
  orderId: 'ord_1',
  number: 7,
  type: 'general',
  status: 'approved',
  requesterId: 'mem_1',
  clinicId: 'cli_1',
  destinationWarehouseId: 'wh_1',
  lines: [{ lineId: 'lin_1', catalogItemId: 'itm_1', sku: 'SKU-1', name: 'Gloves', requestedQty: 3, unitOfMeasure: 'box', category: 'cat_1', highValue: false }],
  approvalPlan: { policyVersion: 1, requiresApproval: true, steps: [{ stage: 'manager', requiredScope: 'orders.approve', minApprovers: 1 }] },
  version: 3,
};

const { lines: _lines, approvalPlan: _approvalPlan, ...orderListItem } = order;

function orderAnswer(overrides: Partial<ResponseToValidate> = {}): ResponseToValidate {
  return {
    method: 'GET',
    path: '/v1/orders/ord_1',
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, etag: '"aGVsbG8"', ...rateLimitHeaders },
    body: order,
    ...overrides,
  };
}

function problem(status: number, code: string, instance: string, extra: Record<string, unknown> = {}) {
  return { type: `${errorTypeBase}/${code}`, title: 'Some title', status, detail: 'Some detail.', instance, code, requestId, ...extra };
}

function problemAnswer(path: string, status: number, code: string, overrides: Partial<ResponseToValidate> = {}): ResponseToValidate {
  return {
    method: 'GET',
    path,
    status,
    // Every 401 carries its challenge.
    headers: { 'content-type': 'application/problem+json; charset=utf-8', 'x-request-id': requestId, ...(status === 401 ? { 'www-authenticate': 'Bearer realm="v1"' } : {}) },
    body: problem(status, code, path.split('?')[0] ?? path),
    ...overrides,
  };
}

describe('the OpenAPI response validator', () => {
  test('given answers that match the document, when they are validated, then nothing is thrown', () => {
    expect(() => validator.validate(orderAnswer())).not.toThrow();
    expect(() => validator.validate(orderAnswer({ path: '/v1/orders?limit=1', body: { data: [orderListItem], hasMore: true, nextCursor: 'abc.def' } }))).not.toThrow();
    expect(() => validator.validate(orderAnswer({ method: 'HEAD', body: undefined, text: '' }))).not.toThrow();
    expect(() => validator.validate(problemAnswer('/v1/orders/nope?x=1', 404, 'orders.not_found', { headers: { 'content-type': 'application/problem+json', 'x-request-id': requestId, ...rateLimitHeaders } }))).not.toThrow();
    expect(() => validator.validate(problemAnswer('/v1/orders/nope', 401, 'api_keys.invalid'))).not.toThrow();
    expect(() => validator.validate(problemAnswer('/v1/nowhere', 404, 'common.not_found'))).not.toThrow();
    expect(() => validator.validate(problemAnswer('/v1/orders', 413, 'common.payload_too_large'))).not.toThrow();
    const allow = { 'content-type': 'application/problem+json', 'x-request-id': requestId, allow: 'GET, HEAD' };
    expect(() => validator.validate(problemAnswer('/v1/orders', 405, 'common.method_not_allowed', { method: 'DELETE', headers: allow }))).not.toThrow();
    expect(() => validator.validate({ method: 'GET', path: '/healthz', status: 200, headers: {}, body: { status: 'ok' } })).not.toThrow();
    // Routing is strict: `/v1/orders/` is a path the document does not have, so only a 404 problem fits it.
    expect(() => validator.validate(orderAnswer({ path: '/v1/orders/', body: { data: [], hasMore: false } }))).toThrow(/not have/);
  });

  test('given an Order with `value`, when it is validated, then the extra property is rejected by name', () => {
    expect(() => validator.validate(orderAnswer({ body: { ...order, value: 12_000 } }))).toThrow(/must NOT have additional properties "value"/);
  });

  test('given a problem document with an eighth field, when it is validated, then it is rejected', () => {
    const answer = problemAnswer('/v1/orders/nope', 401, 'api_keys.invalid', { body: problem(401, 'api_keys.invalid', '/v1/orders/nope', { errors: [] }) });
    expect(() => validator.validate(answer)).toThrow(/not a Problem.*additional properties "errors"/);
    // Also for a path the document does not have, and with validation opted out.
    const elsewhere = problemAnswer('/v1/nowhere', 404, 'common.not_found', { body: problem(404, 'common.not_found', '/v1/nowhere', { hint: 'x' }) });
    expect(() => validator.validate(elsewhere)).toThrow(/additional properties "hint"/);
    expect(() => validator.validateProblemOnly(elsewhere)).toThrow(/additional properties "hint"/);
  });

  test('given an optional field sent as null, when it is validated, then it is rejected', () => {
    expect(() => validator.validate(orderAnswer({ body: { ...order, justification: null } }))).toThrow(/\/justification must be string/);
  });

  test('given a 200 without the rate-limit headers, when it is validated, then the missing header is named', () => {
    const { 'x-ratelimit-limit': _limit, ...withoutLimit } = rateLimitHeaders;
    expect(() => validator.validate(orderAnswer({ headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...withoutLimit } }))).toThrow(
      /header X-RateLimit-Limit .* is missing/,
    );
    expect(() => validator.validate(orderAnswer({ headers: { 'content-type': 'application/json', 'x-request-id': requestId } }))).toThrow(/is missing/);
    expect(() => validator.validate(orderAnswer({ headers: { 'content-type': 'application/json', ...rateLimitHeaders } }))).toThrow(/x-request-id header is missing/);
  });

  test('given answers breaking other rules of the document, when they are validated, then each is rejected with the reason', () => {
    const cases: [string, ResponseToValidate, RegExp][] = [
      ['undocumented status', problemAnswer('/v1/orders/x', 400, 'common.invalid_request'), /status 400 is not documented for GET \/v1\/orders\/\{orderId\}/],
      ['wrong content type', orderAnswer({ headers: { 'content-type': 'text/html', 'x-request-id': requestId, etag: '"aGVsbG8"', ...rateLimitHeaders } }), /content type text\/html is not documented/],
      ['header out of its schema', orderAnswer({ headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...rateLimitHeaders, 'x-ratelimit-reset': '0' } }), /header X-RateLimit-Reset: "0"/],
      ['request id not a UUID', orderAnswer({ headers: { 'content-type': 'application/json', 'x-request-id': 'abc', etag: '"aGVsbG8"', ...rateLimitHeaders } }), /not a UUID/],
      ['body on HEAD', orderAnswer({ method: 'HEAD' }), /HEAD answer must have no body/],
      ['unknown path answering 200', orderAnswer({ path: '/v1/nowhere' }), /path the document does not have must answer 404/],
      ['401 without its challenge', problemAnswer('/v1/orders/x', 401, 'api_keys.invalid', { headers: { 'content-type': 'application/problem+json', 'x-request-id': requestId } }), /WWW-Authenticate .*missing/],
      ['problem status differs', problemAnswer('/v1/orders/x', 401, 'api_keys.invalid', { body: problem(403, 'api_keys.invalid', '/v1/orders/x') }), /problem status 403 differs/],
      ['problem request id differs', problemAnswer('/v1/orders/x', 401, 'api_keys.invalid', { body: problem(401, 'api_keys.invalid', '/v1/orders/x', { requestId: '00000000-0000-4000-8000-000000000000' }) }), /differs from x-request-id/],
      ['problem instance is not the path', problemAnswer('/v1/orders/x', 401, 'api_keys.invalid', { body: problem(401, 'api_keys.invalid', '/v1/orders') }), /instance "\/v1\/orders" is not the request path/],
      ['problem type off base', problemAnswer('/v1/orders/x', 401, 'api_keys.invalid', { body: problem(401, 'api_keys.invalid', '/v1/orders/x', { type: 'https://elsewhere.example/api_keys.invalid' }) }), /problem type/],
      ['problem as application/json', problemAnswer('/v1/nowhere', 404, 'common.not_found', { headers: { 'content-type': 'application/json', 'x-request-id': requestId } }), /must be application\/problem\+json/],
      ['405 without Allow', problemAnswer('/v1/orders', 405, 'common.method_not_allowed', { method: 'DELETE' }), /405 without an Allow header/],
      ['list item breaking its $ref schema', orderAnswer({ path: '/v1/orders?limit=1', body: { data: [{ ...orderListItem, lines: [] }], hasMore: false } }), /\/data\/0 must NOT have additional properties "lines"/],
      ['body not JSON', orderAnswer({ body: undefined, text: '<html>' }), /body is missing or not JSON/],
    ];
    for (const [name, answer, reason] of cases) {
      expect(() => validator.validate(answer), name).toThrow(reason);
    }
  });

  test('given validation opted out, when a success answer breaks the document, then only problem documents are still checked', () => {
    expect(() => validator.validateProblemOnly(orderAnswer({ body: { ...order, value: 1 } }))).not.toThrow();
    expect(() => validator.validateProblemOnly(problemAnswer('/v1/orders/x', 400, 'common.invalid_request'))).not.toThrow();
    expect(() => validator.validateProblemOnly(problemAnswer('/v1/orders/x', 400, 'common.invalid_request', { headers: { 'content-type': 'text/plain', 'x-request-id': requestId } }))).toThrow(
      /must be application\/problem\+json/,
    );
  });
});
