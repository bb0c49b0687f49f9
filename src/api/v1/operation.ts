import type { AnalyticsCaps } from '../../config/analyticsCaps.js';
import type { Clock } from '../../platform/clock.js';
import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import type { RowReader } from '../../platform/projectionReader.js';
import type { z } from 'zod';
import type { Principal } from '../../keys/keyAuthentication.js';
import type { Scope } from '../../keys/scopes.js';
import type { ExportService } from '../../exports/exportService.js';
import type { Language } from '../language.js';
import type { CursorCodec } from '../pagination/cursorCodec.js';
import type { ProblemCode } from '../../platform/errors.js';

/** What a handler may use: the caller, the read models, and the page cursor codec. */
export type OperationContext = {
  readonly principal: Principal;
  /**
   * The request's database connection, on which the key was checked; operations declared
   * `guardedReads` do not use it (their reads go through `reads` with `readGuard`).
   */
  readonly db: CommonQueryMethods;
  /**
   * The primary: where whatever a read stores goes (analytics evidence). The same database as `db`
   * unless `db` is a hot standby (READ_DATABASE_URL).
   */
  readonly primary: CommonQueryMethods;
  /** Reads of the projections: rows of a statement built with the `sql` tag. */
  readonly reads: RowReader;
  /**
   * For operations declared `guardedReads`: the condition every read statement carries (see
   * `ReadGuard`), so that the check that the caller may still read travels with the read, in the
   * same statement. Undefined when the caller was checked on `db` before the handler ran.
   */
  readonly readGuard: FragmentSqlToken | undefined;
  readonly language: Language;
  readonly cursors: CursorCodec;
  readonly operationId: string;
  /** The time analytics are computed at (asOf). */
  readonly clock: Clock;
  readonly analyticsCaps: AnalyticsCaps;
  readonly requestId: string;
  /** The export queue and file store (export operations). */
  readonly exports: ExportService;
};

type AnyObject = z.AnyZodObject;

/**
 * One /v1 operation, declared once: the router serves it and the OpenAPI document is generated
 * from the same declaration, so the two cannot drift apart.
 */
export type Operation<Query extends AnyObject = AnyObject, Params extends AnyObject = AnyObject, Body extends AnyObject = AnyObject> = {
  readonly operationId: string;
  readonly method: 'get' | 'post';
  /** OpenAPI form, e.g. `/v1/orders/{orderId}`. */
  readonly path: string;
  readonly tag: string;
  readonly summary: string;
  readonly description: string;
  /**
   * The handler reads only through `context.reads`, in one statement carrying `context.readGuard`:
   * the router then takes the caller's principal from its cache and checks nothing itself before
   * the handler (one round trip a request).
   */
  readonly guardedReads?: true;
  /**
   * Served by the primary even when hot standbys serve reads: the operation reads what the service
   * itself has just written (an export job is found by the very next GET after its POST).
   */
  readonly readsOwnWrites?: true;
  /** The scope the key must hold; null for `GET /v1/me` (any valid key). */
  readonly scope: Scope | null;
  readonly params?: Params;
  readonly query?: Query;
  /** The JSON request body, when the operation reads one; the body itself is optional. */
  readonly body?: Body;
  /** The URL of what the answer created (`Location`), relative to the server. */
  readonly location?: (result: unknown) => string;
  /** Response body schema of the 200 answer. */
  readonly response: z.ZodTypeAny;
  readonly responseName: string;
  /** Problem codes this operation answers beyond those every operation may answer. */
  readonly problems: readonly ProblemCode[];
  handle(context: OperationContext, input: { query: z.output<Query>; params: z.output<Params>; body: z.output<Body> }): Promise<unknown>;
};

export function defineOperation<Query extends AnyObject, Params extends AnyObject, Body extends AnyObject = AnyObject>(
  operation: Operation<Query, Params, Body>,
): Operation {
  return operation as unknown as Operation;
}
