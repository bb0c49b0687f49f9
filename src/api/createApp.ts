import type { AnalyticsCaps } from '../config/analyticsCaps.js';
import type { TrustProxy } from '../config/config.js';
import type { Clock } from '../platform/clock.js';
import express, { type Express, type Router } from 'express';
import type { ExportService } from '../exports/exportService.js';
import type { DatabasePool } from 'slonik';
import type { PrincipalCache } from '../keys/principalCache.js';
import type { RowReader } from '../platform/projectionReader.js';
import type { ReadRouter } from '../platform/readReplicas.js';
import type { Logger } from '../platform/logger.js';
import { accessLog } from './accessLog.js';
import type { HttpMetrics } from './httpMetrics.js';
import { healthRoutes, type HealthDependencies } from './healthRoutes.js';
import { referencePage } from './openapi/referencePage.js';
import type { OpenApiDocument } from './openapi/openApiDocument.js';
import type { CursorCodec } from './pagination/cursorCodec.js';
import { errorHandler, notFound } from './problems/errorHandler.js';
import { refuseTooManyQueryParameters } from './queryParameters.js';
import { requestBodies } from './requestBodies.js';
import type { RequestBudget } from './rateLimit/requestBudget.js';
import { requestState, stateOf } from './requestState.js';
import type { Operation } from './v1/operation.js';
import { v1Router } from './v1/v1Router.js';

/** What /v1 needs; absent on roles that serve only health and metrics. */
export type ApiDependencies = {
  readonly db: DatabasePool;
  readonly reads: RowReader;
  /** Where /v1 reads go (hot standbys with READ_DATABASE_URL); absent: the primary. */
  readonly router?: ReadRouter;
  readonly principals: PrincipalCache;
  readonly logger: Logger;
  readonly budget: RequestBudget;
  readonly budgetWindowSeconds: number;
  readonly cursors: CursorCodec;
  readonly operations: readonly Operation[];
  readonly openApi: OpenApiDocument;
  readonly clock: Clock;
  readonly analyticsCaps: AnalyticsCaps;
  readonly exports: ExportService;
  /** Signed-link downloads of export files stored locally (absent with S3, whose links go to S3). */
  readonly downloads?: Router;
  /** The assistant endpoint (/mcp) and its OAuth authorization server (src/mcp, built by the composition root). */
  readonly assistant?: Router;
};

export type AppDependencies = HealthDependencies & {
  readonly logger: Logger;
  /** Requests by route, method and status, and their latency (absent: not counted). */
  readonly httpMetrics?: HttpMetrics;
  readonly errorTypeBase: string;
  readonly api?: ApiDependencies;
  /** Reverse proxies trusted to name the client (`X-Forwarded-For`); none by default. */
  readonly trustProxy?: TrustProxy;
};

export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Express answers 304 to `If-None-Match: *` even for an answer without an ETag; conditional
  // answers are decided by sendJson alone.
  Object.defineProperty(app.request, 'fresh', { configurable: true, get: () => false });
  app.set('query parser', 'simple');
  // Paths are case-sensitive everywhere (`/V1/ORDERS` is an unknown path); each router says so too.
  app.set('case sensitive routing', true);
  // Every per-address limit keys on request.ip: the socket's address unless a proxy is trusted.
  app.set('trust proxy', deps.trustProxy ?? false);
  app.use(requestState);
  app.use(accessLog(deps.logger));
  if (deps.httpMetrics !== undefined) app.use(deps.httpMetrics.middleware);
  // Before any route: an oversized body is refused whatever the path, unread.
  app.use(requestBodies(deps.errorTypeBase));
  const api = deps.api;
  // /v1 first: its requests, the hot path, pass no other router on their way.
  if (api !== undefined) app.use('/v1', v1Router(api));
  app.use(refuseTooManyQueryParameters);
  app.use(healthRoutes(deps));
  if (api !== undefined) {
    app.get('/openapi.json', (_request, response) => {
      response.json(api.openApi);
    });
    app.use(referencePage());
    if (api.downloads !== undefined) {
      app.use(
        '/downloads',
        (_request, response, next) => {
          stateOf(response).route = '/downloads/{key}';
          next();
        },
        api.downloads,
      );
    }
    if (api.assistant !== undefined) app.use(api.assistant);
  }
  app.use(notFound);
  app.use(errorHandler(deps.errorTypeBase, deps.logger));
  return app;
}
