import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

/**
 * The one place where a /v1 answer becomes bytes. A GET answer carries a strong `ETag` computed
 * over exactly those bytes, and a GET whose `If-None-Match` matches it answers 304 with no body
 * (the headers already set, such as the budget's, stay). Express's own freshness check is switched
 * off in createApp, so no other code path answers 304.
 */
export function sendRepresentation(request: Request, response: Response, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  if (request.method === 'GET' || request.method === 'HEAD') {
    const etag = strongEtag(bytes);
    response.set('ETag', etag);
    if (status === 200 && ifNoneMatchMatches(request.headers['if-none-match'], etag)) {
      response.status(304).end();
      return;
    }
  }
  response.status(status).type('application/json; charset=utf-8').set('Content-Length', String(bytes.length));
  response.end(bytes);
}

/** A strong entity tag over the body bytes: equal bytes, equal tag; any change, another tag. */
export function strongEtag(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`;
}

/**
 * RFC 9110 §13.1.2: weak comparison against each listed tag; `*` matches any current
 * representation, which a 200 answer is.
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = opaqueTag(etag);
  return (header.match(/(?:W\/)?"[^"]*"/g) ?? []).some((candidate) => opaqueTag(candidate) === opaque);
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
