import { describe, expect, test } from 'vitest';
import { useApiBed } from '../support/useApiBed.js';
import { createRawClient, openConnection, type RawConnection, type SocketAnswer } from './rawHttp.js';

/**
 * The HTTP edges of the composed service (as `serve` builds it), seen from a bare socket: bodies
 * larger than anything a route reads, `Expect`, chunked bodies that never end, the case of paths,
 * and the challenge of /v1's 401. Every check is decided by what arrives, never by time.
 */

const given = useApiBed({ scopes: ['analytics:read', 'orders:read'], bed: { tenants: 1 } });

/** The largest body any path reads (a /mcp batch), and the limit of /v1 and the OAuth endpoints. */
const serviceLimit = 64 * 1024;
const routeLimit = 16 * 1024;
/** A client streaming a body that never ends stops here: far beyond what the kernel buffers between the two ends. */
const endlessBodyBytes = 256 * 1024 * 1024;

function head(method: string, path: string, headers: Record<string, string>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

function problemOf(answer: SocketAnswer): { code: string; status: number; instance: string } {
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  return JSON.parse(answer.body) as { code: string; status: number; instance: string };
}

/** Streams chunks of a body that never ends until the server closes the connection; the bytes handed to the kernel. */
async function streamEndlessly(connection: RawConnection): Promise<number> {
  const piece = Buffer.alloc(16 * 1024, 0x7b);
  const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
  let written = 0;
  while (written < endlessBodyBytes && !connection.isClosed()) {
    try {
      await connection.write(chunk);
    } catch {
      break;
    }
    written += piece.length;
  }
  return written;
}

async function withConnection<T>(run: (connection: RawConnection) => Promise<T>): Promise<T> {
  const connection = await openConnection(given.bed.baseUrl);
  try {
    return await run(connection);
  } finally {
    connection.destroy();
  }
}

describe('bodies larger than the service reads', () => {
  const paths: readonly (readonly [string, string])[] = [
    ['POST', '/v1/orders'],
    ['POST', '/v1/analytics/exports'],
    ['GET', '/v1/me'],
    ['POST', '/register'],
    ['POST', '/token'],
    ['POST', '/mcp'],
    ['POST', '/nowhere'],
    ['GET', '/healthz'],
  ];

  test.each(paths)('given %s %s with Content-Length 999999999999 and no key, then 413 common.payload_too_large arrives before any body byte is sent, and the connection closes', async (method, path) => {
    await withConnection(async (connection) => {
      await connection.write(head(method, path, { 'Content-Type': 'application/json', 'Content-Length': '999999999999' }));
      const answer = await connection.nextAnswer();
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(problemOf(answer)).toMatchObject({ code: 'common.payload_too_large', status: 413, instance: path });
      await connection.closed;
    });
  });

  test.each([
    ['POST', '/v1/analytics/exports'],
    ['POST', '/register'],
    ['POST', '/token'],
    ['POST', '/revoke'],
  ])('given %s %s with a body declared over its 16 KiB, then 413 before any body byte is sent', async (method, path) => {
    await withConnection(async (connection) => {
      await connection.write(head(method, path, { authorization: `Bearer ${given.key}`, 'Content-Type': 'application/json', 'Content-Length': String(routeLimit + 1) }));
      const answer = await connection.nextAnswer();
      expect(problemOf(answer)).toMatchObject({ code: 'common.payload_too_large', status: 413 });
      await connection.closed;
    });
  });

  test.each([
    ['POST', '/v1/orders', 413],
    ['POST', '/v1/analytics/exports', 413],
    ['POST', '/register', 413],
    ['POST', '/mcp', 401],
    ['POST', '/nowhere', 404],
    ['GET', '/healthz', 200],
    // A large answer is let finish whole before the connection closes.
    ['GET', '/openapi.json', 200],
  ])('given %s %s with a chunked body that never ends, then %i and the connection closed long before the client is done', async (method, path, status) => {
    await withConnection(async (connection) => {
      await connection.write(head(method, path, { Accept: 'application/json', 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
      const answered = connection.nextAnswer();
      const written = await streamEndlessly(connection);
      const answer = await answered;
      expect(answer.status).toBe(status);
      if (status === 413) expect(problemOf(answer).code).toBe('common.payload_too_large');
      // The server stopped reading: what the client managed to hand over is what the buffers between the two ends hold.
      expect(written).toBeLessThan(endlessBodyBytes);
      await connection.closed;
    });
  });

  test.each([
    ['declared', { 'Content-Length': String(40 * 1024) }],
    ['chunked', { 'Transfer-Encoding': 'chunked' }],
  ] as const)('given a %s body of 40 KiB that no route reads, then the answer, the body drained, and the connection stays usable', async (_framing, framing) => {
    await withConnection(async (connection) => {
      const body = Buffer.alloc(40 * 1024, 0x61);
      await connection.write(head('GET', '/healthz', framing));
      await connection.write('Transfer-Encoding' in framing ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]) : body);
      expect((await connection.nextAnswer()).status).toBe(200);
      await connection.write(head('GET', '/healthz', {}));
      expect((await connection.nextAnswer()).status).toBe(200);
      expect(connection.isClosed()).toBe(false);
    });
  });

  test('given an acceptable chunked body on /v1, then it is read and the connection stays usable', async () => {
    await withConnection(async (connection) => {
      const body = JSON.stringify({ period: 'daily' });
      await connection.write(head('POST', '/v1/analytics/exports', { authorization: `Bearer ${given.key}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }));
      await connection.write(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`);
      expect((await connection.nextAnswer()).status).toBe(202);
      await connection.write(head('GET', '/v1/me', { authorization: `Bearer ${given.key}` }));
      expect((await connection.nextAnswer()).status).toBe(200);
      expect(connection.isClosed()).toBe(false);
    });
  });
});

describe('Expect', () => {
  test('given Expect: 100-continue with a body declared over the limit, then 413 instead of 100 Continue, and the connection closes', async () => {
    for (const length of [999_999_999_999, serviceLimit + 1, routeLimit + 1]) {
      await withConnection(async (connection) => {
        await connection.write(head('POST', '/v1/analytics/exports', { authorization: `Bearer ${given.key}`, Expect: '100-continue', 'Content-Type': 'application/json', 'Content-Length': String(length) }));
        const answer = await connection.nextAnswer();
        expect({ length, status: answer.status }).toEqual({ length, status: 413 });
        expect(problemOf(answer).code).toBe('common.payload_too_large');
        await connection.closed;
      });
    }
  });

  test('given Expect: 100-continue with an acceptable body, then 100 Continue, and once the body is sent the answer', async () => {
    await withConnection(async (connection) => {
      const body = JSON.stringify({ period: 'weekly' });
      await connection.write(head('POST', '/v1/analytics/exports', { authorization: `Bearer ${given.key}`, Expect: '100-continue', 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) }));
      expect((await connection.nextAnswer()).status).toBe(100);
      await connection.write(body);
      const answer = await connection.nextAnswer();
      expect(answer.status).toBe(202);
      expect(JSON.parse(answer.body)).toMatchObject({ period: 'weekly', status: 'pending' });
    });
  });

  test.each([
    ['/nowhere', 404],
    ['/mcp', 401],
  ] as const)('given Expect: 100-continue on POST %s, answered without reading the body, then %i without a 100 Continue', async (path, status) => {
    await withConnection(async (connection) => {
      await connection.write(head('POST', path, { Expect: '100-continue', Accept: 'application/json', 'Content-Type': 'application/json', 'Content-Length': '10' }));
      const answer = await connection.nextAnswer();
      expect(answer.status).toBe(status);
    });
  });

  test('given an Expect other than 100-continue, then 417 common.expectation_failed as a problem document', async () => {
    for (const path of ['/v1/me', '/nowhere', '/mcp']) {
      await withConnection(async (connection) => {
        await connection.write(head('GET', path, { authorization: `Bearer ${given.key}`, Expect: 'the-moon' }));
        const answer = await connection.nextAnswer();
        expect(answer.status).toBe(417);
        expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
        expect(problemOf(answer)).toMatchObject({ code: 'common.expectation_failed', status: 417, instance: path });
      });
    }
  });
});

describe('paths are case-sensitive', () => {
  test('given a path in another case, then 404 common.not_found before any key check, with a key or without', async () => {
    const client = createRawClient(given.bed.baseUrl);
    try {
      for (const [method, path] of [
        ['GET', '/V1/ORDERS'],
        ['GET', '/V1/orders'],
        ['GET', '/v1/ORDERS'],
        ['GET', '/v1/Me'],
        ['GET', '/HEALTHZ'],
        ['GET', '/OpenAPI.json'],
        ['POST', '/MCP'],
        ['GET', '/MCP'],
        ['POST', '/Register'],
        ['GET', '/AUTHORIZE'],
        ['GET', '/.well-known/OAUTH-AUTHORIZATION-SERVER'],
        ['GET', '/.WELL-KNOWN/oauth-authorization-server'],
        ['GET', '/.well-known/oauth-protected-resource/MCP'],
      ] as const) {
        for (const headers of [{}, { authorization: `Bearer ${given.key}` }]) {
          const answer = await client.send({ method, path, headers });
          expect({ method, path, status: answer.status, code: (answer.body as { code?: string } | undefined)?.code }).toEqual({ method, path, status: 404, code: 'common.not_found' });
        }
      }
      // The paths as written still answer.
      expect((await client.send({ path: '/v1/me', headers: { authorization: `Bearer ${given.key}` } })).status).toBe(200);
      expect((await client.send({ path: '/.well-known/oauth-authorization-server' })).status).toBe(200);
      expect((await client.send({ path: '/.well-known/oauth-protected-resource/mcp' })).status).toBe(200);
    } finally {
      client.close();
    }
  });
});

describe('the 401 of /v1', () => {
  test('given any key problem, then the same 401 with WWW-Authenticate: Bearer realm="v1", documented in the contract', async () => {
    const revoked = await given.bed.issueKey(given.tenant, ['orders:read']);
    // Cached first, so that the revoked key is refused by the read's own guard.
    expect((await given.bed.request('/v1/orders?limit=1', { key: revoked })).status).toBe(200);
    await given.bed.revokeKey(revoked);
    const wrongChecksum = given.key.slice(0, -1) + (given.key.endsWith('0') ? '1' : '0');
    const answers = [
      await given.bed.request('/v1/orders'),
      await given.bed.request('/v1/orders', { headers: { authorization: `Basic ${given.key}` } }),
      await given.bed.request('/v1/orders', { headers: { authorization: 'Bearer' } }),
      await given.bed.request('/v1/orders', { headers: { authorization: 'Bearer not-a-key' } }),
      await given.bed.request('/v1/orders', { headers: { authorization: `Bearer ${wrongChecksum}` } }),
      await given.bed.request('/v1/orders', { key: 'svc_test_abcdefghijklmnopqrstuvwx_abcd' }),
      await given.bed.request('/v1/orders', { key: revoked }),
      await given.bed.request('/v1/me', { key: revoked }),
    ];
    const seen = new Set<string>();
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="v1"');
      const { requestId: _requestId, instance: _instance, ...rest } = answer.body as Record<string, unknown>;
      expect(rest).toMatchObject({ code: 'api_keys.invalid', status: 401 });
      seen.add(JSON.stringify(rest));
    }
    // Identical whatever the cause (only the request id and the path differ).
    expect(seen.size).toBe(1);
    const document = (await given.bed.request('/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    expect(Object.keys(document.paths['/v1/orders']?.get?.responses['401']?.headers ?? {})).toContain('WWW-Authenticate');
  });
});
