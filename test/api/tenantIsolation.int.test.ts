import { beforeAll, describe, expect, test } from 'vitest';
import { invalidRequestDetails, problemCatalogue } from '../../src/api/problems/problemCatalogue.js';
import type { ProblemCode } from '../../src/platform/errors.js';
import type { Operation } from '../../src/api/v1/operation.js';
import { v1Operations } from '../../src/api/v1/operations.js';
import type { TenantSummary } from '../../src/console/seedSummary.js';
import { issuableScopes } from '../../src/keys/scopes.js';
import { testErrorTypeBase, type ApiResponse, type ApiTestBed } from '../support/apiTestBed.js';
import { apiClient, useApiBed, type Page } from '../support/useApiBed.js';
import { services } from '../support/services.js';

/**
 * Spec, Resources conventions 1 and Authentication 4: an id of another tenant behaves exactly like
 * an id that does not exist. The sweep is derived from `v1Operations`, so a new operation with a
 * path id or a filter id is covered without touching this file (or fails here until it has an id source).
 */

const pathParameter = /\{(\w+)\}/g;

/** Operations with an id in their path (`{metric}` is a documented key, not an id). */
const idOperations = v1Operations.filter((operation) => operation.method === 'get' && /\{\w+Id\}/.test(operation.path));
const filterIdOperations = v1Operations.filter((operation) => operation.responseName.endsWith('List')).flatMap((operation) =>
  Object.keys(operation.query?.shape ?? {})
    .filter((name) => name.endsWith('Id'))
    .map((parameter) => ({ operation, parameter })),
);
const paginatedOperations = v1Operations.filter((operation) => operation.query !== undefined && 'cursor' in operation.query.shape);

let bed: ApiTestBed;
let tenantA: TenantSummary;
let tenantB: TenantSummary;
let keyA: string;
let keyB: string;

function only<T>(items: readonly T[], what: string): T {
  const [first, ...others] = items;
  if (first === undefined || others.length > 0) throw new Error(`expected exactly one ${what}, found ${items.length}`);
  return first;
}

function first<T>(items: readonly T[] | undefined, what: string): T {
  const found = items?.[0];
  if (found === undefined) throw new Error(`no ${what}`);
  return found;
}

/** The path of an operation with each `{name}` replaced. */
function pathOf(operation: Operation, ids: Readonly<Record<string, string>>): string {
  return operation.path.replace(pathParameter, (_match, name: string) => {
    const id = ids[name];
    if (id === undefined) throw new Error(`no id for {${name}} of ${operation.operationId}`);
    return encodeURIComponent(id);
  });
}

/** An id no tenant has, of the same length and prefix as `id`, so that answer sizes are comparable too. */
function unknownLike(id: string): string {
  const prefixEnd = id.indexOf('_') + 1;
  const unknown = `${id.slice(0, prefixEnd)}${'Q'.repeat(id.length - prefixEnd)}`;
  if (unknown === id) throw new Error(`cannot make an unknown id like ${id}`);
  return unknown;
}

const pageOf = (path: string, key: string): Promise<Page> => apiClient({ bed, key }).page(path);

/**
 * An id of tenant B for a path parameter, found for the operation that uses it: B's key must read
 * it (checked by the caller), so the sweep cannot pass vacuously.
 */
const existingIdOfB: Readonly<Record<string, (operation: Operation) => Promise<string>>> = {
  itemId: async () => first(tenantB.itemIds, 'catalog item of B'),
  boxId: async () => first(tenantB.boxIds, 'box of B'),
  orderId: async (operation) =>
    operation.operationId === 'getFulfillment'
      ? // Only an order with a delivery record has a custody history.
        String(first((await pageOf('/v1/fulfillments?limit=1', keyB)).data, 'delivery record of B').orderId)
      : first(tenantB.orderIds, 'order of B'),
  exportId: async () => {
    const response = await bed.request('/v1/analytics/exports', { key: keyB, method: 'POST' });
    expect(response.status, response.text).toBe(202);
    return String((response.body as { exportId: unknown }).exportId);
  },
};

/** Everything of an answer that must not tell a foreign id from an unknown one. */
function comparable(response: ApiResponse) {
  const perRequest = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit']);
  const headers = [...response.headers.entries()].filter(([name]) => name !== 'date').map(([name, value]) => [name, perRequest.has(name) ? '(per request)' : value]);
  const { requestId: _requestId, instance: _instance, ...body } = response.body as Record<string, unknown>;
  return { status: response.status, headers, body };
}

function notFoundCodeOf(operation: Operation): ProblemCode {
  return only(
    operation.problems.filter((code) => problemCatalogue[code].status === 404),
    `404 code of ${operation.operationId}`,
  );
}

function expectedProblem(code: ProblemCode, path: string, response: ApiResponse, detail?: string) {
  const definition = problemCatalogue[code];
  return {
    type: `${testErrorTypeBase}/${code}`,
    title: definition.title.en,
    status: definition.status,
    detail: detail ?? definition.detail.en,
    instance: path.split('?', 1)[0],
    code,
    requestId: response.headers.get('x-request-id'),
  };
}

describe.runIf(services.postgres)('tenant isolation: another tenant’s ids answer exactly like unknown ids', () => {
  const given = useApiBed({ scopes: issuableScopes, bed: { tenants: 2 } });
  beforeAll(async () => {
    ({ bed, tenant: tenantA, otherTenant: tenantB, key: keyA } = given);
    keyB = await bed.issueKey(tenantB, issuableScopes);
  });

  test('given the operations of /v1, when the sweep lists them, then every path id, filter id and cursor operation is covered', () => {
    expect(idOperations.map((operation) => operation.path).sort()).toEqual(
      expect.arrayContaining([
        '/v1/catalog/items/{itemId}',
        '/v1/fulfillments/{orderId}',
        '/v1/inventory/boxes/{boxId}',
        '/v1/inventory/boxes/{boxId}/balance',
        '/v1/inventory/boxes/{boxId}/movements',
        '/v1/orders/{orderId}',
        '/v1/analytics/exports/{exportId}',
      ]),
    );
    expect(filterIdOperations.map(({ operation, parameter }) => `${operation.path}?${parameter}`)).toEqual(
      expect.arrayContaining(['/v1/inventory/balances?catalogItemId', '/v1/inventory/balances?warehouseId']),
    );
    expect(paginatedOperations.map((operation) => operation.path)).toEqual(expect.arrayContaining(['/v1/inventory/balances', '/v1/orders', '/v1/fulfillments']));
    expect(tenantA.workspaceId).not.toBe(tenantB.workspaceId);
  });

  test.each(idOperations.map((operation) => [`${operation.method.toUpperCase()} ${operation.path}`, operation] as const))(
    'given tenant A holding every scope, when it asks %s for an id that exists only in tenant B, then the answer equals the one for an unknown id',
    async (_name, operation) => {
      const names = [...operation.path.matchAll(pathParameter)].map((match) => match[1] ?? '');
      const idsOfB: Record<string, string> = {};
      for (const name of names) {
        const source = Object.hasOwn(existingIdOfB, name) ? existingIdOfB[name] : undefined;
        if (source === undefined) throw new Error(`no id source for {${name}} of ${operation.operationId}: add one to existingIdOfB`);
        idsOfB[name] = await source(operation);
      }
      const unknownIds = Object.fromEntries(Object.entries(idsOfB).map(([name, id]) => [name, unknownLike(id)]));
      const foreignPath = pathOf(operation, idsOfB);
      const unknownPath = pathOf(operation, unknownIds);

      // Not vacuous: the id is B's, and the unknown id is unknown to B as well.
      expect((await bed.request(foreignPath, { key: keyB })).status).toBe(200);
      expect((await bed.request(unknownPath, { key: keyB })).status).toBe(404);

      const foreign = await bed.request(foreignPath, { key: keyA });
      const unknown = await bed.request(unknownPath, { key: keyA });
      const code = notFoundCodeOf(operation);
      expect(foreign.body).toEqual(expectedProblem(code, foreignPath, foreign));
      expect(unknown.body).toEqual(expectedProblem(code, unknownPath, unknown));
      expect(comparable(foreign)).toEqual(comparable(unknown));
      expect(foreign.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(foreign.headers.get('cache-control')).toBe('no-store');
      expect(foreign.headers.get('x-ratelimit-limit')).not.toBeNull();
    },
  );

  test.each(filterIdOperations.map(({ operation, parameter }) => [`${operation.path}?${parameter}=`, operation, parameter] as const))(
    'given tenant A holding every scope, when it filters %s with an id of tenant B, then it gets the same empty page as for an unknown id',
    async (_name, operation, parameter) => {
      const row = first((await pageOf(`${operation.path}?limit=1`, keyB)).data, `row of ${operation.operationId} for B`);
      const idOfB = row[parameter];
      if (typeof idOfB !== 'string') throw new Error(`the rows of ${operation.operationId} have no ${parameter}`);
      const foreignPath = `${operation.path}?${parameter}=${encodeURIComponent(idOfB)}`;
      const unknownPath = `${operation.path}?${parameter}=${encodeURIComponent(unknownLike(idOfB))}`;

      const ofB = await pageOf(foreignPath, keyB);
      expect(ofB.data.length).toBeGreaterThan(0);
      expect(ofB.data.every((item) => item[parameter] === idOfB)).toBe(true);

      const foreign = await bed.request(foreignPath, { key: keyA });
      const unknown = await bed.request(unknownPath, { key: keyA });
      expect(foreign.status).toBe(200);
      expect(foreign.body).toEqual({ data: [], hasMore: false });
      expect(comparable(foreign)).toEqual(comparable(unknown));
    },
  );

  test.each(paginatedOperations.map((operation) => [operation.path, operation] as const))(
    'given a cursor that %s issued to tenant B, when tenant A sends it, then 400 common.invalid_request',
    async (path, _operation) => {
      const pageOfB = await pageOf(`${path}?limit=1`, keyB);
      const cursorOfB = pageOfB.nextCursor;
      if (cursorOfB === undefined) throw new Error(`${path} has a single page for B`);
      // Not vacuous: the cursor works for B, and A's own cursors work for A.
      expect((await pageOf(`${path}?limit=1&cursor=${encodeURIComponent(cursorOfB)}`, keyB)).data.length).toBe(1);
      const cursorOfA = (await pageOf(`${path}?limit=1`, keyA)).nextCursor;
      if (cursorOfA === undefined) throw new Error(`${path} has a single page for A`);
      expect((await pageOf(`${path}?limit=1&cursor=${encodeURIComponent(cursorOfA)}`, keyA)).data.length).toBe(1);

      const crossed = `${path}?limit=1&cursor=${encodeURIComponent(cursorOfB)}`;
      const response = await bed.request(crossed, { key: keyA });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(expectedProblem('common.invalid_request', crossed, response, invalidRequestDetails.cursor.en));
    },
  );
  test('given an item of tenant B with stock exceptions in B, when tenant A narrows its exceptions to that id, then A sees no stock exceptions, as for an unknown id', async () => {
    type Report = { total: number; exceptions: { metric: string; reference: Record<string, unknown> }[] };
    const report = async (query: string, key: string) => {
      const response = await bed.request(`/v1/analytics/exceptions${query}`, { key });
      expect(response.status, response.text).toBe(200);
      return response.body as Report;
    };
    const stockOf = (r: Report) => r.exceptions.filter((e) => e.metric === 'LOW_STOCK' || e.metric === 'EXPIRING_STOCK');
    const itemOfB = String(first(stockOf(await report('', keyB)), 'stock exception of B').reference.catalogItemId);
    expect(stockOf(await report(`?catalogItemId=${encodeURIComponent(itemOfB)}`, keyB)).length).toBeGreaterThan(0);

    const foreign = await report(`?catalogItemId=${encodeURIComponent(itemOfB)}`, keyA);
    const unknown = await report(`?catalogItemId=${encodeURIComponent(unknownLike(itemOfB))}`, keyA);
    expect(stockOf(foreign)).toEqual([]);
    // Evidence ids name asOf, which differs between two requests.
    const withoutEvidence = (r: Report) => r.exceptions.map(({ evidenceId: _evidence, ...rest }: Record<string, unknown>) => rest);
    expect(withoutEvidence(foreign)).toEqual(withoutEvidence(unknown));
    expect(foreign.total).toBe(unknown.total);
  });

  test('given both tenants, when each asks for the clinic comparison, then each sees only its own clinics', async () => {
    const clinicsOf = async (key: string) => {
      const response = await bed.request('/v1/analytics/clinics/comparison', { key });
      expect(response.status).toBe(200);
      return (response.body as { clinics: { clinicId: string }[] }).clinics.map((c) => c.clinicId).sort();
    };
    expect(await clinicsOf(keyA)).toEqual([...tenantA.clinicIds].sort());
    expect(await clinicsOf(keyB)).toEqual([...tenantB.clinicIds].sort());
  });
});
