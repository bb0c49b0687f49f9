import type { Response } from 'express';

/**
 * Sends a JSON answer. The one place where the bytes of a /v1 answer's body are produced (whatever
 * is computed over them, such as an entity tag, belongs here). Written with node's own response
 * methods: Express's send would copy the text into a Buffer and compute an ETag nobody reads.
 * For HEAD, node sends the headers only.
 */
export function sendJson(response: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.statusCode = status;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(text));
  response.end(text);
}
