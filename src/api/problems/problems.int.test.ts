import { systemClock } from '../../platform/clock.js';
import { loadConfig } from '../../config/config.js';
import type { AddressInfo } from 'node:net';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { testErrorTypeBase } from '../../../test/support/apiTestBed.js';
import { useApiBed } from '../../../test/support/useApiBed.js';
import { createLogger } from '../../platform/logger.js';
import { sql } from '../../platform/sql.js';
import { createApp } from '../createApp.js';
import { createCursorCodec } from '../pagination/cursorCodec.js';
import { createRequestBudget } from '../rateLimit/requestBudget.js';
import { createPrincipalCache } from '../../keys/principalCache.js';
import { slonikRowReader } from '../../platform/projectionReader.js';
import { defineOperation } from '../v1/operation.js';
import { meOperation } from '../v1/me.js';
import { buildOpenApiDocument } from '../openapi/openApiDocument.js';
import { problemCatalogue } from './problemCatalogue.js';

const given = useApiBed({ scopes: ['orders:read', 'catalog:read'], bed: { tenants: 1 } });

const problemFields = ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type'];

describe('problem documents', () => {
  test('given a bad request, when it fails, then the answer is application/problem+json with exactly the seven fields', async () => {
    const response = await given.bed.request('/v1/orders?limit=abc&status=closed', { key: given.key });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(Object.keys(response.body as object).sort()).toEqual(problemFields);
    expect(response.body).toEqual({
      type: `${testErrorTypeBase}/common.invalid_request`,
      title: 'Invalid request',
      status: 400,
      detail: 'The query parameter "limit" must be a whole number from 1 to 200, written with digits only.',
      instance: '/v1/orders',
      code: 'common.invalid_request',
      requestId: response.headers.get('x-request-id'),
    });
  });

  test('given an X-Request-Id that is a UUID, then it is echoed; anything else is replaced by a new UUID', async () => {
    const mine = '0b7f5a2e-4c1d-4e8f-9a3b-6d2c1e0f9a8b';
    const echoed = await given.bed.request('/v1/orders/unknown', { key: given.key, headers: { 'X-Request-Id': mine } });
    expect(echoed.headers.get('x-request-id')).toBe(mine);
    expect((echoed.body as { requestId: string }).requestId).toBe(mine);
    for (const sent of ['not-a-uuid', `${mine}0`, 'x'.repeat(200)]) {
      const replaced = await given.bed.request('/v1/me', { key: given.key, headers: { 'X-Request-Id': sent } });
      const id = replaced.headers.get('x-request-id') ?? '';
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(id).not.toBe(sent);
    }
    const a = await given.bed.request('/healthz');
    const b = await given.bed.request('/healthz');
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  test.each([
    ['es', 'es'],
    ['pt', 'pt'],
    ['en', 'en'],
    ['pt-BR,pt;q=0.9', 'pt'],
    ['fr-FR, es;q=0.5, en;q=0.4', 'es'],
    ['en;q=0.1, pt;q=0.8', 'pt'],
    ['es;q=0, en;q=0.5', 'en'],
    ['fr, de', 'en'],
    ['*', 'en'],
    ['', 'en'],
    ['!!!;q=nonsense', 'en'],
  ])('given Accept-Language %j, then title and detail are in %s', async (header, language) => {
    const response = await given.bed.request('/v1/orders/nope', { key: given.key, headers: { 'Accept-Language': header } });
    const body = response.body as { title: string; detail: string; code: string };
    const expected = problemCatalogue['orders.not_found'];
    expect(body).toMatchObject({ code: 'orders.not_found', title: expected.title[language as 'en'], detail: expected.detail[language as 'en'] });
    expect(response.headers.get('content-language')).toBe(language);
  });

  test('given a path that does not exist, in /v1 or outside it, then 404 common.not_found whether or not a key is sent', async () => {
    for (const path of ['/v1/nothing', '/v1/orders/a/b', '/v2/orders', '/', '/v1']) {
      for (const headers of [{}, { authorization: `Bearer ${given.key}` }] as Record<string, string>[]) {
        const response = await given.bed.request(path, { headers });
        expect({ path, status: response.status, code: (response.body as { code?: string }).code }).toEqual({ path, status: 404, code: 'common.not_found' });
      }
    }
  });

  test('given a method a path does not accept, then 405 common.method_not_allowed with Allow', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const response = await given.bed.request('/v1/orders', { key: given.key, method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect((response.body as { code: string }).code).toBe('common.method_not_allowed');
    }
  });

  test('given HEAD on an operation, then it answers like GET without a body', async () => {
    const response = await given.bed.request('/v1/me', { key: given.key, method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.text).toBe('');
    expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
  });

  test('given a body larger than the limit, then 413 common.payload_too_large before anything is read', async () => {
    const response = await given.bed.request('/v1/orders', { key: given.key, method: 'POST', body: 'x'.repeat(64 * 1024), headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(413);
    expect((response.body as { code: string }).code).toBe('common.payload_too_large');
  });

  test('given a path with broken percent-encoding, then 404 common.not_found (it names nothing), never 500', async () => {
    const response = await rawGet(`/v1/orders/%E0%A4%A`, given.key);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'common.not_found', instance: '/v1/orders/%E0%A4%A' });
  });

  test('given a request Node cannot parse, then a problem document with a request id still answers', async () => {
    const url = new URL(given.bed.baseUrl);
    const answer = async (raw: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => socket.end(raw));
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    const huge = await answer(`GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1.1 431 /);
    expect(huge).toMatch(/x-request-id: [0-9a-f-]{36}/);
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'common.request_header_too_large', status: 431 });
    const badLength = await answer('GET /v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(badLength).toMatch(/^HTTP\/1.1 400 /);
    expect(JSON.parse(badLength.slice(badLength.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'common.invalid_request', status: 400 });
  });

  test('given a chunked body over the limit on a GET, then 413 as for a declared one', async () => {
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 40; i += 1) controller.enqueue(new TextEncoder().encode('x'.repeat(1024)));
        controller.close();
      },
    });
    const response = await fetch(`${given.bed.baseUrl}/v1/me`, { method: 'POST', headers: { authorization: `Bearer ${given.key}` }, body, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(413);
  });

  test('given a trailing slash, then the path is another one: 404', async () => {
    const response = await given.bed.request('/v1/orders/', { key: given.key });
    expect(response.status).toBe(404);
    expect((response.body as { code: string }).code).toBe('common.not_found');
  });

  test('given any answer, then it has nosniff and no x-powered-by; /v1 answers are no-store', async () => {
    for (const path of ['/v1/me', '/v1/nothing', '/healthz', '/openapi.json']) {
      const response = await given.bed.request(path, { key: given.key });
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-powered-by')).toBeNull();
      if (path.startsWith('/v1')) expect(response.headers.get('cache-control')).toBe('no-store');
    }
    expect((await given.bed.request('/v1/orders', {})).headers.get('cache-control')).toBe('no-store');
  });
});

describe('unexpected failures', () => {
  test('given an operation that fails inside, then 500 common.internal_error with nothing internal, and the error is logged with the request id', async () => {
    const logs: string[] = [];
    const logger = createLogger('info', { write: (line: string) => logs.push(line) });
    const failing = defineOperation({
      ...meOperation,
      operationId: 'failing',
      path: '/v1/failing',
      scope: null,
      response: z.object({}),
      handle: async ({ db }) => db.query(sql.typeAlias('void')`SELECT FROM secret_internal_table_name`),
    });
    const operations = [failing];
    const budget = await createRequestBudget({ pointsPerWindow: 100, windowSeconds: 60, logger });
    const exportService = given.bed.exports.service;
    if (exportService === undefined) throw new Error('the test bed has no export service');
    const app = createApp({
      readiness: async () => ({ ready: true, checks: {} }),
      logger,
      errorTypeBase: testErrorTypeBase,
      api: {
        db: given.bed.database.pool,
        reads: slonikRowReader(given.bed.database.pool),
        principals: createPrincipalCache(),
        logger,
        budget,
        budgetWindowSeconds: 60,
        cursors: createCursorCodec('x'.repeat(32)),
        operations,
        openApi: buildOpenApiDocument(operations, { serverUrl: 'http://localhost', errorTypeBase: testErrorTypeBase }),
        clock: systemClock,
        analyticsCaps: loadConfig({}).analyticsCaps,
        exports: exportService,
      },
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/failing?q=1`, {
        headers: { authorization: `Bearer ${given.key}`, 'accept-language': 'es' },
      });
      const body = (await response.json()) as Record<string, unknown>;
      expect(response.status).toBe(500);
      expect(body).toEqual({
        type: `${testErrorTypeBase}/common.internal_error`,
        title: 'Error interno',
        status: 500,
        detail: problemCatalogue['common.internal_error'].detail.es,
        instance: '/v1/failing',
        code: 'common.internal_error',
        requestId: response.headers.get('x-request-id'),
      });
      expect(JSON.stringify(body)).not.toContain('secret_internal_table_name');
      const logged = logs.join('');
      expect(logged).toContain('secret_internal_table_name');
      expect(logged).toContain(String(body.requestId));
    } finally {
      server.close();
      await budget.close();
    }
  });
});

function rawGet(path: string, apiKey: string): Promise<{ status: number; body: string }> {
  const url = new URL(given.bed.baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${apiKey}` } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}
