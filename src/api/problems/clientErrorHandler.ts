import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { ApiError, invalidRequest } from '../../platform/errors.js';
import { problemDocument } from './problemDocument.js';

/**
 * Node answers requests it cannot parse (headers over its limit, a malformed Content-Length), or
 * that do not arrive in time (see `listen`), with a bare status line before any middleware runs. This answers them with a problem document and a
 * request id instead, in English (the headers could not be read), then closes the connection.
 */
export function clientErrorHandler(errorTypeBase: string): (error: Error & { code?: string }, socket: Duplex) => void {
  return (error, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const apiError =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('common.request_header_too_large')
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new ApiError('common.request_timeout')
          : invalidRequest('http');
    const requestId = randomUUID();
    // The request line could not be trusted, so the instance is the root.
    const document = problemDocument(apiError, { errorTypeBase, language: 'en', requestId, path: '/' });
    const body = JSON.stringify(document);
    socket.end(
      [
        `HTTP/1.1 ${document.status} ${document.title}`,
        'Content-Type: application/problem+json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `x-request-id: ${requestId}`,
        'X-Content-Type-Options: nosniff',
        'Cache-Control: no-store',
        'Content-Language: en',
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  };
}
