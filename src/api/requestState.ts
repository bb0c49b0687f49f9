import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { KeyRefusal, Principal } from '../keys/keyAuthentication.js';
import { negotiateLanguage, type Language } from './language.js';
import type { ProblemContext } from './problems/problemDocument.js';

/**
 * What every response needs to know about its request: its id and the caller's language; once
 * known, the key's principal, or why the key was refused (for the access log, never the answer).
 */
export type RequestState = {
  readonly requestId: string;
  readonly language: Language;
  principal?: Principal;
  refusal?: KeyRefusal & { readonly budgetRefunded?: boolean };
  /** The route template that answered, for the metrics (e.g. `/v1/orders/{orderId}`). */
  route?: string;
};

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * First middleware of the app: a request id (an incoming X-Request-Id that is a UUID is reused,
 * anything else is replaced by a new one), echoed as `x-request-id` on every response, and the
 * negotiated language. Also `nosniff`, on every response.
 */
export function requestState(request: Request, response: Response, next: NextFunction): void {
  const incoming = request.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && uuidPattern.test(incoming) ? incoming : randomUUID();
  const state: RequestState = { requestId, language: negotiateLanguage(request) };
  response.locals.state = state;
  response.setHeader('x-request-id', requestId);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  next();
}

export function stateOf(response: Response): RequestState {
  const state: unknown = response.locals.state;
  if (state === undefined || state === null) throw new Error('requestState middleware has not run');
  return state as RequestState;
}

export function problemContextOf(request: Request, response: Response, errorTypeBase: string): ProblemContext {
  const state = stateOf(response);
  // originalUrl: request.path is relative to the router a handler is mounted on.
  const path = request.originalUrl.split('?', 1)[0] ?? '/';
  return { errorTypeBase, language: state.language, requestId: state.requestId, path };
}
