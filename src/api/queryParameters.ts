import type { RequestHandler } from 'express';
import { invalidRequest } from '../platform/errors.js';

/**
 * Most query parameters a request may carry. Node's query parser (Express's `simple` one) keeps
 * the first 1000 and silently drops the rest, so a request past it would be answered as if a
 * filter or a `limit` sent later had not been sent: it is refused instead.
 */
export const maxQueryParameters = 1000;

/**
 * 400 `common.invalid_request` for a query string of more than `maxQueryParameters` parameters,
 * outside /v1 (whose operations refuse it where they read their parameters, after the key and
 * budget checks, as every other 400 of theirs).
 */
export const refuseTooManyQueryParameters: RequestHandler = (request, _response, next) => {
  if (exceedsMaxQueryParameters(request.url)) throw invalidRequest('parameters');
  next();
};

/** Whether the query string of `url` has more parameters than Node's parser keeps. */
export function exceedsMaxQueryParameters(url: string): boolean {
  // A URL this short cannot hold that many `&`: the usual request costs one comparison.
  return url.length > maxQueryParameters && countExceeds(url);
}

/** Counted as Node's parser counts them: every `&`-separated piece, empty ones included. */
function countExceeds(url: string): boolean {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return false;
  let pieces = 1;
  for (let at = url.indexOf('&', queryStart); at !== -1; at = url.indexOf('&', at + 1)) {
    pieces += 1;
    if (pieces > maxQueryParameters) return true;
  }
  return false;
}
