import type { Server } from 'node:http';
import net from 'node:net';
import { eventually } from '../../test/support/eventually.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { createApp } from './createApp.js';
import { clientTimeouts, listen } from './listen.js';

const errorTypeBase = 'https://problems.example/v1';

/** An app serving health only: slow clients are the HTTP server's concern, before any route. */
function healthApp() {
  return createApp({ readiness: async () => ({ ready: true, checks: {} }), logger: createLogger('silent'), errorTypeBase });
}

type SlowSocket = { closedAt?: number; received: string; /** Its first header bytes are written. */ sending?: boolean };

/** A slowloris client: opens a request and sends one more header byte every `dripMs`, never ending the headers. */
function slowHeaderSocket(port: number, dripMs: number): SlowSocket {
  const state: SlowSocket = { received: '' };
  let drip: NodeJS.Timeout | undefined;
  const socket = net.connect(port, '127.0.0.1', () => {
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ', () => (state.sending = true));
    drip = setInterval(() => {
      if (socket.writable) socket.write('a');
    }, dripMs);
  });
  socket.on('data', (chunk: Buffer) => (state.received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(drip);
    state.closedAt = performance.now();
  });
  return state;
}

describe('slow clients', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('a server started by listen bounds headers, whole requests and idle keep-alive connections', async () => {
    server = await listen(healthApp(), { port: 0, host: '127.0.0.1', errorTypeBase });
    expect({ headers: server.headersTimeout, request: server.requestTimeout, keepAlive: server.keepAliveTimeout }).toEqual({
      headers: clientTimeouts.headersMs,
      request: clientTimeouts.requestMs,
      keepAlive: clientTimeouts.keepAliveMs,
    });
    expect(clientTimeouts.headersMs).toBeLessThanOrEqual(10_000);
  });

  it('closes 1 000 slow-header sockets once the header timeout has passed, with a 408 problem document, and keeps serving others', async () => {
    const timeouts = { headersMs: 1_500, requestMs: 3_000, keepAliveMs: 1_000, checkIntervalMs: 250 };
    server = await listen(healthApp(), { port: 0, host: '127.0.0.1', errorTypeBase, timeouts });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const started = performance.now();
    const sockets = Array.from({ length: 1_000 }, () => slowHeaderSocket(address.port, 200));

    // Meanwhile (every slow socket has sent its first header bytes) a well-behaved client is served at once.
    await eventually(() => expect(sockets.filter((s) => !s.sending)).toEqual([]));
    const healthy = await fetch(`http://127.0.0.1:${address.port}/healthz`);
    expect(healthy.status).toBe(200);

    await eventually(() => expect(sockets.filter((s) => s.closedAt === undefined).length).toBe(0));
    // Not before the timeout: the drip kept every socket busy, so only the header timeout closes them.
    const earliest = Math.min(...sockets.map((s) => s.closedAt ?? Number.POSITIVE_INFINITY)) - started;
    expect(earliest).toBeGreaterThanOrEqual(timeouts.headersMs - 100);
    const answered = sockets.filter((s) => s.received.startsWith('HTTP/1.1 408 '));
    expect(answered.length).toBeGreaterThan(0);
    const sample = answered[0]?.received ?? '';
    expect(sample).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(sample.slice(sample.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 408, code: 'common.request_timeout', instance: '/' });
  }, 30_000);
});
