import type { IncomingMessage, RequestListener, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '../platform/errors.js';
import { sendProblem } from './problems/problemDocument.js';
import { problemContextOf } from './requestState.js';

/**
 * Largest request body any path reads: a JSON-RPC body of /mcp (a batch of messages). The export
 * request of /v1, the OAuth registration and the OAuth forms take at most 16 KiB (`bodyLimit`).
 */
export const maxRequestBodyBytes = 64 * 1024;

/** Requests that sent `Expect: 100-continue`: the 100 goes out only when a body reader starts reading. */
const awaitingContinue = new WeakSet<IncomingMessage>();
/** Requests whose Expect header asks for something else: answered 417. */
const unmetExpectation = new WeakSet<IncomingMessage>();
/** The limit of each request that carries a body (the path's, once its route has named one). */
const limits = new WeakMap<IncomingMessage, { bytes: number }>();

/**
 * Node answers `Expect: 100-continue` with `100 Continue` before any route has seen the request,
 * and any other expectation with a bare 417. Here both reach the app instead: the 100 is sent
 * when a reader starts on the body (never for a body refused for its declared length, nor for a
 * request answered without reading one), and the 417 is a problem document.
 */
export function answerExpectations(server: Server, app: RequestListener): void {
  server.on('checkContinue', (request: IncomingMessage, response) => {
    awaitingContinue.add(request);
    app(request, response);
  });
  server.on('checkExpectation', (request: IncomingMessage, response) => {
    unmetExpectation.add(request);
    app(request, response);
  });
}

/** How long a connection closed while its request is still arriving goes on dropping what arrives (see closeLingering). */
export const lingerMs = 1_000;

/**
 * Ends a connection whose request is still arriving: the answer goes out and is followed by the
 * end of the connection, then what the client still sends is dropped until it closes too, for at
 * most `lingerMs`. Closed at once, with bytes of the request unread, the connection would be
 * reset, and a reset can discard an answer still on its way to a client busy sending.
 */
function closeLingering(socket: Socket): void {
  if (socket.destroyed) return;
  socket.end();
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Node closes a connection after an answer with `Connection: close` by destroying it as soon as
 * the answer is written (`destroySoon`); this connection lingers instead.
 */
function lingerAfterAnswer(request: IncomingMessage): void {
  const socket = request.socket;
  socket.destroySoon = () => closeLingering(socket);
}

/** The 413 of a body over the limit; the connection is closed, the rest of the body is never read. */
function payloadTooLarge(request: IncomingMessage): ApiError {
  lingerAfterAnswer(request);
  return new ApiError('common.payload_too_large', { headers: { Connection: 'close' } });
}

function declaredLength(request: IncomingMessage): number | undefined {
  const header = request.headers['content-length'];
  return header === undefined ? undefined : Number(header);
}

/**
 * Early in the app, before any route: a request whose body is declared longer than
 * `maxRequestBodyBytes` is answered 413 `common.payload_too_large` at once, whatever its path, and
 * its connection closed. A body of unknown length (chunked) is counted as it is read: past the
 * limit, 413 and the connection closed. A body that no route read is drained once the answer is
 * out, up to the limit, and the connection closed beyond it (Node would otherwise read it to its
 * end, however long). An unmet `Expect` is 417 `common.expectation_failed`.
 */
export function requestBodies(errorTypeBase: string): RequestHandler {
  return (request, response, next) => {
    if (unmetExpectation.has(request)) {
      lingerAfterAnswer(request);
      next(new ApiError('common.expectation_failed', { headers: { Connection: 'close' } }));
      return;
    }
    const declared = declaredLength(request);
    if ((declared === undefined || declared === 0) && request.headers['transfer-encoding'] === undefined) {
      next();
      return;
    }
    if (declared !== undefined && declared > maxRequestBodyBytes) {
      next(payloadTooLarge(request));
      return;
    }
    const limit = { bytes: maxRequestBodyBytes };
    limits.set(request, limit);
    watchBody(request, response, limit, () => {
      if (response.headersSent) {
        // The answer is out or going out: it is let finish, and the connection closes.
        closeLingering(request.socket);
        return;
      }
      const error = payloadTooLarge(request);
      response.set(error.headers);
      sendProblem(response, error, problemContextOf(request, response, errorTypeBase));
    });
    next();
  };
}

/**
 * Counts the bytes of a body from the moment anything reads it (a body reader, or the drain after
 * the answer) and calls `refuse` once when they pass the limit. The 100 Continue a client waits
 * for is sent when a reader starts.
 */
function watchBody(request: Request, response: Response, limit: { readonly bytes: number }, refuse: () => void): void {
  let received = 0;
  let watching = false;
  const count = (chunk: Buffer) => {
    const before = received;
    received += chunk.length;
    if (before <= limit.bytes && received > limit.bytes) refuse();
  };
  const start = () => {
    if (watching) return;
    watching = true;
    request.off('newListener', onListener);
    if (awaitingContinue.has(request) && !response.headersSent) response.writeContinue();
    request.on('data', count);
  };
  const onListener = (event: string | symbol) => {
    if (event === 'data' || event === 'readable') start();
  };
  request.on('newListener', onListener);
  response.once('prefinish', () => {
    if (!request.complete && !watching) start();
  });
}

/**
 * Runs a body reader (a body-parser middleware) outside the middleware chain. A chunked body is
 * refused by `requestBodies` the moment it passes the limit, before the reader gives up on it (the
 * reader waits for the rest, which is never read): its callback then comes after the answer, and
 * is dropped.
 */
export function readBodyWith(reader: RequestHandler, request: Request, response: Response, done: (error?: unknown) => void): void {
  void reader(request, response, (error?: unknown) => {
    if (!response.headersSent) done(error);
  });
}

/**
 * A lower limit for the bodies of one route (the export request, the OAuth registration and
 * forms): a body declared longer is answered 413 at once, a chunked one once it passes it.
 */
export function bodyLimit(bytes: number): RequestHandler {
  return (request, _response, next) => {
    const limit = limits.get(request);
    if (limit === undefined) {
      next();
      return;
    }
    limit.bytes = Math.min(limit.bytes, bytes);
    const declared = declaredLength(request);
    next(declared !== undefined && declared > limit.bytes ? payloadTooLarge(request) : undefined);
  };
}
