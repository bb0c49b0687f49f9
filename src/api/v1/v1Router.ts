import type { AnalyticsCaps } from '../../config/analyticsCaps.js';
import type { Clock } from '../../platform/clock.js';
import express, { Router, type Request, type Response } from 'express';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { ZodDefault, ZodEffects, ZodEnum, ZodOptional, type z } from 'zod';
import { checkKey, type KeyRefusal, type Principal } from '../../keys/keyAuthentication.js';
import { hashKey, keyPrefix, keyShapeOf } from '../../keys/keyFormat.js';
import type { PrincipalCache } from '../../keys/principalCache.js';
import { issuableScopes } from '../../keys/scopes.js';
import { isAccessRefused, slonikRowReader, type RowReader } from '../../platform/projectionReader.js';
import type { ReadRoute, ReadRouter } from '../../platform/readReplicas.js';
import type { CursorCodec } from '../pagination/cursorCodec.js';
import { ApiError, invalidRequest, type InvalidRequestCause } from '../../platform/errors.js';
import { exceedsMaxQueryParameters } from '../queryParameters.js';
import { budgetHeaders, type RequestBudget } from '../rateLimit/requestBudget.js';
import { bodyLimit } from '../requestBodies.js';
import { stateOf } from '../requestState.js';
import { sendJson } from '../sendJson.js';
import type { ExportService } from '../../exports/exportService.js';
import type { Logger } from '../../platform/logger.js';
import { invokeOperation } from './invokeOperation.js';
import type { Operation, OperationContext } from './operation.js';

export type V1Dependencies = {
  /** The primary: operations that read their own writes, and what reads store. */
  readonly db: DatabasePool;
  /** The reads of operations declared `guardedReads` on the primary (named prepared statements on a pool of their own). */
  readonly reads: RowReader;
  /** Where reads go when hot standbys serve them (READ_DATABASE_URL); absent: the primary. */
  readonly router?: ReadRouter;
  readonly principals: PrincipalCache;
  readonly logger: Logger;
  readonly budget: RequestBudget;
  readonly budgetWindowSeconds: number;
  readonly cursors: CursorCodec;
  readonly operations: readonly Operation[];
  readonly clock: Clock;
  readonly analyticsCaps: AnalyticsCaps;
  readonly exports: ExportService;
  /** Overrides `requestDeadlineMs` (tests). */
  readonly requestDeadlineMs?: number;
};

/**
 * Longest a /v1 request may run before it is answered 500 `common.internal_error`: the
 * database's own bounds (connection, statement and query timeouts) end most work sooner, but a
 * request can also queue for a pool slot for as long as the database is away.
 */
export const requestDeadlineMs = 15_000;

/** Largest request body /v1 reads (only the export request has one). */
export const maxBodyBytes = 16 * 1024;

/**
 * The /v1 router. For each operation, in this order: key (401), scope (403), the safety check
 * behind it (403 `common.forbidden`), the request budget (429), then the parameters (400) and the
 * handler. Every answer is `Cache-Control: no-store`.
 *
 * Operations declared `guardedReads` take one statement a request: the key's principal comes from
 * the process's cache (filled by a full key check on a key's first request) and the handler's read
 * statement checks that the key may still read (see `serveGuardedOperation`). The others check the
 * key on the request's connection first, then run the handler on it.
 */
export function v1Router(deps: V1Dependencies): Router {
  // Strict: `/v1/orders/` is not `/v1/orders` (an empty id is no id); and `/v1/ORDERS` is not `/v1/orders`.
  const router = Router({ strict: true, caseSensitive: true });
  router.use((_request, response, next) => {
    response.set('Cache-Control', 'no-store');
    next();
  });
  // Any body, declared or chunked, is read up to the limit and refused beyond it (413, unread).
  router.use(bodyLimit(maxBodyBytes), express.raw({ type: () => true, limit: maxBodyBytes }));
  // The primary as a route: the router's when there is one, else the dependencies' own pools.
  const primary: ReadRoute = deps.router?.primary ?? { name: 'primary', standby: false, db: deps.db, reads: deps.reads };
  const methodsByPath = new Map<string, string[]>();
  for (const operation of deps.operations) {
    const path = expressPath(operation.path);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), operation.method]);
    router[operation.method](path, (request: Request, response: Response) => {
      stateOf(response).route = operation.path;
      // A key that fails its format or checksum is refused before a connection is even taken.
      const presented = wellFormedKeyOf(request.headers.authorization, response);
      const serveOn = (route: ReadRoute): Promise<void> =>
        operation.guardedReads === true
          ? serveGuardedOperation(deps, operation, route, presented, request, response)
          : route.db.connect((db) => serveOperation(deps, operation, route, db, presented, request, response));
      const route = operation.readsOwnWrites === true || deps.router === undefined ? primary : deps.router.route();
      return withinDeadline(deps.requestDeadlineMs ?? requestDeadlineMs, () =>
        route.standby ? withStandbyFallback(deps.logger, route, primary, response, serveOn) : serveOn(route),
      );
    });
  }
  for (const [path, methods] of methodsByPath) {
    const allow = methods.flatMap((method) => (method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()])).join(', ');
    const template = `/v1${path.replace(/:(\w+)/g, '{$1}')}`;
    router.all(path, (_request: Request, response: Response) => {
      stateOf(response).route = template;
      throw new ApiError('common.method_not_allowed', { headers: { Allow: allow } });
    });
  }
  router.use(() => {
    throw new ApiError('common.not_found');
  });
  return router;
}

/**
 * Serves on `route`, a standby; when the request fails there for another reason than
 * an answer of the API (the standby stopped, a statement cancelled by a recovery conflict), serves
 * it again on the primary, so that a standby going away costs latency, not errors. The watcher
 * takes the standby out of rotation on its next poll.
 */
async function withStandbyFallback(
  logger: Logger,
  route: ReadRoute,
  primary: ReadRoute,
  response: Response,
  serve: (route: ReadRoute) => Promise<void>,
): Promise<void> {
  try {
    await serve(route);
  } catch (error) {
    if (error instanceof ApiError || isAccessRefused(error) || response.headersSent) throw error;
    logger.warn({ standby: route.name, err: error }, 'a read failed on a standby; serving it on the primary');
    stateOf(response).principal = undefined;
    await serve(primary);
  }
}

/** A request that ran out of time; answered like any unexpected failure. */
export class RequestDeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`request did not finish within ${deadlineMs} ms`);
    this.name = 'RequestDeadlineError';
  }
}

/**
 * Runs `work`, or rejects once `deadlineMs` has passed. Work that finishes later finds its
 * response already sent; whatever it ends with is dropped.
 */
async function withinDeadline(deadlineMs: number, work: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const running = work();
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      running.catch(() => undefined);
      reject(new RequestDeadlineError(deadlineMs));
    }, deadlineMs);
  });
  try {
    await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** One operation on one connection: key, scope, safety check, budget, parameters, handler. */
async function serveOperation(
  deps: V1Dependencies,
  operation: Operation,
  route: ReadRoute,
  db: CommonQueryMethods,
  presentedKey: string,
  request: Request,
  response: Response,
): Promise<void> {
  const { principal, refusal } = await checkKey(db, presentedKey);
  if (principal === undefined) throw keyRefused(response, refusal);
  stateOf(response).principal = principal;
  checkScopes(operation, principal);
  const spent = await spendBudget(deps, principal);
  response.set(spent);
  try {
    await runHandler(deps, operation, { principal, db, primary: route.standby ? deps.db : db, reads: slonikRowReader(db), readGuard: undefined }, request, response);
  } catch (error) {
    await giveBackForRetry(deps, route, error, principal, spent, response);
    throw error;
  }
}

/**
 * A request that failed on a standby for another reason than an answer of the API is served again
 * on the primary (`withStandbyFallback`), where it spends its budget unit again: the first one is
 * given back.
 */
async function giveBackForRetry(
  deps: V1Dependencies,
  route: ReadRoute,
  error: unknown,
  principal: Principal,
  spent: Record<string, string> | undefined,
  response: Response,
): Promise<void> {
  if (!route.standby || spent === undefined || error instanceof ApiError || isAccessRefused(error)) return;
  await deps.budget.refund(principal.prefix);
  for (const name of Object.keys(spent)) response.removeHeader(name);
}

/**
 * An operation declared `guardedReads`, in one statement: the principal of a key seen before comes
 * from the cache, and the handler's statement carries `keyAccessGuard`, so a key revoked (or whose
 * member or tenant was suspended) since is refused by that very statement: 401, and the budget
 * unit it took is given back. An answer decided before that statement ran (403, 429, 400, or a 404
 * without a lookup) is given only after the key has been checked again, so that 401 still comes
 * first and a refused key spends no budget.
 */
async function serveGuardedOperation(
  deps: V1Dependencies,
  operation: Operation,
  route: ReadRoute,
  presentedKey: string,
  request: Request,
  response: Response,
): Promise<void> {
  const keyHash = hashKey(presentedKey);
  let entry = deps.principals.get(keyHash);
  const cached = entry !== undefined;
  if (entry === undefined) {
    const checked = await checkKey(route.db, presentedKey);
    if (checked.principal === undefined) throw keyRefused(response, checked.refusal);
    entry = deps.principals.set(keyHash, checked.principal);
  }
  const { principal, readGuard } = entry;
  stateOf(response).principal = principal;
  let spent: Record<string, string> | undefined;
  const refuse = async (refusal: KeyRefusal): Promise<never> => {
    deps.principals.delete(keyHash);
    if (spent !== undefined) {
      await deps.budget.refund(principal.prefix);
      for (const name of Object.keys(spent)) response.removeHeader(name);
    }
    stateOf(response).principal = undefined;
    throw keyRefused(response, refusal, spent !== undefined);
  };
  try {
    checkScopes(operation, principal);
    spent = await spendBudget(deps, principal);
    response.set(spent);
    await runHandler(deps, operation, { principal, db: route.db, primary: deps.db, reads: route.reads, readGuard }, request, response);
  } catch (error) {
    if (isAccessRefused(error)) {
      // The full check on the pool has the last word: a refusal it does not confirm is logged
      // and the request is served the way unguarded operations are (check, then read, on one
      // connection), so that a valid key is never answered 401.
      const { principal: confirmed, refusal } = await checkKey(route.db, presentedKey);
      if (confirmed === undefined) return refuse(refusal);
      deps.logger.warn({ keyPrefix: principal.prefix, operationId: operation.operationId }, 'read guard refused a key that the full key check accepts');
      return route.db.connect((db) =>
        runHandler(deps, operation, { principal: confirmed, db, primary: route.standby ? deps.db : db, reads: slonikRowReader(db), readGuard: undefined }, request, response),
      );
    }
    if (cached && error instanceof ApiError) {
      const { refusal } = await checkKey(route.db, presentedKey);
      if (refusal !== undefined) return refuse(refusal);
    }
    await giveBackForRetry(deps, route, error, principal, spent, response);
    throw error;
  }
}

function checkScopes(operation: Operation, principal: Principal): void {
  if (operation.scope !== null && !principal.scopes.includes(operation.scope)) throw new ApiError('api_keys.scope_missing');
  // Safety behind the scope check: a stored key holding a scope no key may hold reads nothing.
  if (principal.scopes.some((scope) => !(issuableScopes as readonly string[]).includes(scope))) throw new ApiError('common.forbidden');
}

async function runHandler(
  deps: V1Dependencies,
  operation: Operation,
  caller: Pick<OperationContext, 'principal' | 'db' | 'primary' | 'reads' | 'readGuard'>,
  request: Request,
  response: Response,
): Promise<void> {
  const state = stateOf(response);
  const input = {
    query: parseQuery(operation.query, request),
    params: parseParameters(operation.params, request.params),
    body: parseBody(operation.body, request.body),
  };
  const body = await invokeOperation(deps, operation, { ...caller, language: state.language, requestId: state.requestId }, input);
  if (operation.location !== undefined) response.set('Location', operation.location(body));
  sendJson(response, operation.method === 'post' ? 202 : 200, body);
}

/** `/v1/orders/{orderId}` → `/orders/:orderId` (relative to the /v1 mount). */
function expressPath(openApiPath: string): string {
  return openApiPath.replace(/^\/v1/, '').replace(/\{(\w+)\}/g, ':$1');
}

/** The key of `Authorization: Bearer <key>` (scheme in any case), or 401 when it is absent or not well formed. */
function wellFormedKeyOf(header: string | undefined, response: Response): string {
  if (header === undefined) throw keyRefused(response, { reason: 'missing' });
  const presented = /^bearer +(\S+)$/i.exec(header)?.[1];
  if (presented === undefined) throw keyRefused(response, { reason: 'scheme' });
  const shape = keyShapeOf(presented);
  if (shape === 'malformed') throw keyRefused(response, { reason: 'malformed' });
  if (shape === 'checksum') throw keyRefused(response, { reason: 'checksum', keyPrefix: keyPrefix(presented) });
  return presented;
}

/**
 * The challenge of every /v1 401 (RFC 9110 §11.6.1), the same whatever the cause: no `error`
 * attribute (RFC 6750's `invalid_token` would tell a wrong key from a missing one).
 */
export const keyChallenge = 'Bearer realm="v1"';

/**
 * The one 401 of every key problem; why, and the key's prefix, are kept for the access log only.
 * `refunded`: the budget unit the request had taken was given back.
 */
function keyRefused(response: Response, refusal: KeyRefusal, refunded = false): ApiError {
  stateOf(response).refusal = refunded ? { ...refusal, budgetRefunded: true } : refusal;
  return new ApiError('api_keys.invalid', { headers: { 'WWW-Authenticate': keyChallenge } });
}

/** One unit of the key's budget, or 429; the headers announcing what is left. */
async function spendBudget(deps: V1Dependencies, principal: Principal): Promise<Record<string, string>> {
  const decision = await deps.budget.consume(principal.prefix);
  const headers = budgetHeaders(decision, deps.budgetWindowSeconds);
  if (!decision.allowed) throw new ApiError('common.too_many_requests', { headers });
  return headers;
}

const causeByParameter: Readonly<Record<string, InvalidRequestCause>> = {
  limit: 'limit',
  cursor: 'cursor',
  status: 'status',
  metric: 'metric',
  from: 'date',
  to: 'date',
  granularity: 'granularity',
  period: 'period',
};

/** Path parameters; one outside its documented values (a metric key) is a 400 naming it and them. */
function parseParameters(schema: z.AnyZodObject | undefined, params: unknown): Record<string, unknown> {
  if (schema === undefined) return {};
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  throw invalidParameter(schema, parsed.error.issues[0], 'path');
}

/**
 * The 400 of a parameter that failed its schema: its cause (a custom issue may name a finer one,
 * e.g. `date_plus`), its name, and the values it takes when it is an enum.
 */
function invalidParameter(schema: z.AnyZodObject, issue: z.ZodIssue | undefined, fallback: string): ApiError {
  const name = String(issue?.path[0] ?? fallback);
  const named = issue?.code === 'custom' ? (issue.params as { cause?: InvalidRequestCause } | undefined)?.cause : undefined;
  return invalidRequest(named ?? causeByParameter[name] ?? 'parameter', name, enumValuesOf(schema.shape[name] as z.ZodTypeAny | undefined));
}

/** The values of an enum schema, through optional, default and effect wrappers; undefined for any other schema. */
function enumValuesOf(schema: z.ZodTypeAny | undefined): readonly string[] | undefined {
  let current: unknown = schema;
  for (;;) {
    if (current instanceof ZodEnum) return current.options as readonly string[];
    if (current instanceof ZodOptional || current instanceof ZodDefault) current = current._def.innerType;
    else if (current instanceof ZodEffects) current = current._def.schema;
    else return undefined;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The JSON body of an operation that reads one, whatever its Content-Type. An absent or blank body
 * is `{}`; text that is not JSON is a 400 `body`, and anything but an object holding only the
 * declared fields a 400 `body_fields` (or the cause of the field, e.g. `period`).
 */
function parseBody(schema: z.AnyZodObject | undefined, raw: unknown): Record<string, unknown> {
  if (schema === undefined) return {};
  let value: unknown = {};
  if (Buffer.isBuffer(raw) && raw.length > 0) {
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      throw invalidRequest('body');
    }
    if (text.trim() !== '') {
      try {
        value = JSON.parse(text);
      } catch {
        throw invalidRequest('body');
      }
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidRequest('body_fields');
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const issue = parsed.error.issues[0];
  const name = issue?.code === 'unrecognized_keys' ? undefined : issue?.path[0];
  throw invalidRequest(typeof name === 'string' ? (causeByParameter[name] ?? 'body_fields') : 'body_fields');
}

/**
 * Declared parameters only (others are ignored); a repeated or invalid one is a 400 naming it, and
 * so is a query string too long for the parser to keep every parameter of it.
 */
function parseQuery(schema: z.AnyZodObject | undefined, request: Request): Record<string, unknown> {
  if (schema === undefined) return {};
  if (exceedsMaxQueryParameters(request.url)) throw invalidRequest('parameters');
  const raw = (request.query ?? {}) as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const name of Object.keys(schema.shape)) {
    const value = Object.hasOwn(raw, name) ? raw[name] : undefined;
    if (Array.isArray(value)) throw invalidRequest('repeated', name);
    if (value !== undefined) picked[name] = value;
  }
  const parsed = schema.safeParse(picked);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  throw invalidParameter(schema, parsed.error.issues[0], 'query');
}
