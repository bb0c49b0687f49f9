import { systemClock, type Clock } from '../platform/clock.js';
import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { createApp, type ApiDependencies } from '../api/createApp.js';
import type { Readiness } from '../api/healthRoutes.js';
import { buildOpenApiDocument } from '../api/openapi/openApiDocument.js';
import { createCursorCodec } from '../api/pagination/cursorCodec.js';
import type { HttpMetrics } from '../api/httpMetrics.js';
import { createLimits, createRequestBudget } from '../api/rateLimit/requestBudget.js';
import type { Operation } from '../api/v1/operation.js';
import { v1Operations } from '../api/v1/operations.js';
import type { Config } from '../config/config.js';
import { createPrincipalCache } from '../keys/principalCache.js';
import type { Database } from '../platform/db.js';
import type { ReadRouter } from '../platform/readReplicas.js';
import { composeReadRouter, openRequestPools } from './readRouting.js';
import type { Logger } from '../platform/logger.js';
import { loadSigningSecret } from '../platform/signingSecret.js';
import type { AssistantDependencies } from '../mcp/assistantRoutes.js';
import { lazyAssistantRoutes } from '../mcp/lazyAssistantRoutes.js';
import { scheduleOAuthPurge } from '../mcp/oauthMaintenance.js';
import type { ExportsRuntime } from './exportsComposition.js';

export const budgetWindowSeconds = 60;

/** What a test may change in the assistant's parts, passed visibly (production passes none). */
export type AssistantOverrides = Partial<Pick<AssistantDependencies, 'db' | 'limits' | 'addressLimits' | 'limitKeyPrefix' | 'createTransport'>>;

export type ComposedApi = ApiDependencies & { readonly router: ReadRouter; close(): Promise<void> };

/**
 * The parts /v1 runs on: its own database pool (requests change no session state, so connections
 * are not reset on release), the request budget (Redis when REDIS_URL is set), cursor signing and
 * the contract.
 */
export async function composeApi(
  config: Config,
  logger: Logger,
  database: Pick<Database, 'connectionUri' | 'kind'>,
  options: {
    serverUrl: string;
    clock?: Clock;
    exports: ExportsRuntime;
    /** Checks every row of the hot reads against its zod schema (tests); off by default, see ProjectionReader. */
    validateProjectionRows?: boolean;
    /** The address clients reach, when it is known only after listening (`--port 0`); default `serverUrl`. */
    currentServerUrl?: () => string;
    /** Counts the budget's 429s and refunds, and the assistant's tool calls; the budget /v1 and /mcp spend is the metered one. */
    httpMetrics: HttpMetrics;
    /** The operations of /v1 and the assistant's tools (tests); `v1Operations` by default. */
    operations?: readonly Operation[];
    /** Parts of the assistant a test replaces (a failing transport, small per-address limits). */
    assistant?: AssistantOverrides;
  },
): Promise<ComposedApi> {
  const exportService = options.exports.service;
  if (exportService === undefined) throw new Error('the api role needs the export queue');
  // Requests of the hot operations take one connection of the reader; the others one of this pool.
  // Both are bounded (requestPoolTimeouts) so that a request ends in bounded time while Postgres is away.
  const validateRows = options.validateProjectionRows ?? false;
  const { db: pool, reads } = await openRequestPools(database.connectionUri, database.kind, logger, { validateRows });
  // With READ_DATABASE_URL, the reads of /v1 and /mcp go to a usable hot standby (see ReadRouter).
  let router: ReadRouter;
  let secret: string;
  try {
    router = await composeReadRouter(config, logger, { connectionUri: database.connectionUri, pools: { db: pool, reads } }, { validateRows });
    secret = await loadSigningSecret(pool, config.signingSecret).catch(async (error: unknown) => {
      await router.close();
      throw error;
    });
  } catch (error) {
    await reads.close();
    await pool.end();
    throw error;
  }
  const unmetered = await createRequestBudget({
    pointsPerWindow: config.rateLimitPerMinute,
    windowSeconds: budgetWindowSeconds,
    logger,
    ...(config.redisUrl === undefined ? {} : { redisUrl: config.redisUrl }),
  });
  const budget = options.httpMetrics.metered(unmetered);
  logger.info({ store: budget.store, perMinute: config.rateLimitPerMinute }, 'request budget');
  const clock = options.clock ?? systemClock;
  const cursors = createCursorCodec(secret);
  const operations = options.operations ?? v1Operations;
  // Without PUBLIC_BASE_URL the document names no host: `/` is the origin it was loaded from
  // (localhost, 127.0.0.1, a tunnel), which is where /docs, held to its own origin, sends requests.
  const openApi = buildOpenApiDocument(operations, { serverUrl: config.publicBaseUrl ?? '/', errorTypeBase: config.errorTypeBase });
  const publicBaseUrl = config.publicBaseUrl;
  const baseUrl = publicBaseUrl === undefined ? (options.currentServerUrl ?? (() => options.serverUrl)) : () => publicBaseUrl;
  const assistantAvailable = mayIssueFor(baseUrl());
  if (!assistantAvailable) {
    logger.warn({ publicBaseUrl }, 'the assistant endpoint /mcp is off: OAuth needs PUBLIC_BASE_URL to be https (or localhost)');
  }
  const oauthPurge = assistantAvailable ? scheduleOAuthPurge({ pool, clock, logger }) : undefined;
  // The assistant's per-address limits (OAuth endpoints, failed tokens): shared through Redis when it is set.
  const overrides = options.assistant ?? {};
  const ownLimits = assistantAvailable && overrides.limits === undefined ? await createLimits({ logger, ...(config.redisUrl === undefined ? {} : { redisUrl: config.redisUrl }) }) : undefined;
  const assistantLimits = assistantAvailable ? (overrides.limits ?? ownLimits) : undefined;
  return {
    db: pool,
    reads,
    router,
    principals: createPrincipalCache(),
    logger,
    budget,
    budgetWindowSeconds,
    cursors,
    operations,
    clock,
    analyticsCaps: config.analyticsCaps,
    exports: exportService,
    ...(options.exports.downloads === undefined ? {} : { downloads: options.exports.downloads }),
    openApi,
    ...(assistantLimits !== undefined
      ? {
          assistant: lazyAssistantRoutes({
            limits: assistantLimits,
            db: pool,
            router,
            budget,
            operations,
            cursors,
            clock,
            analyticsCaps: config.analyticsCaps,
            exports: exportService,
            logger,
            errorTypeBase: config.errorTypeBase,
            version: openApi.info.version,
            baseUrl,
            observeToolCall: options.httpMetrics.toolCall,
            ...overrides,
          }),
        }
      : {}),
    close: async () => {
      await oauthPurge?.stop();
      await ownLimits?.close();
      await budget.close();
      await router.close();
      await reads.close();
      await pool.end();
    },
  };
}

/**
 * The HTTP app of a role as `serve` builds it, and as the test beds build theirs: request state,
 * access log, HTTP metrics, bodies, /v1, health and metrics, the contract, downloads and /mcp, the
 * problem documents. Without `api` (roles other than api) only health and metrics.
 */
export function composeApp(
  config: Pick<Config, 'errorTypeBase' | 'trustProxy'>,
  logger: Logger,
  parts: { readonly readiness: () => Promise<Readiness>; readonly registry: Registry; readonly httpMetrics: HttpMetrics; readonly api?: ApiDependencies },
): Express {
  return createApp({
    readiness: parts.readiness,
    metrics: parts.registry,
    httpMetrics: parts.httpMetrics,
    logger,
    errorTypeBase: config.errorTypeBase,
    trustProxy: config.trustProxy,
    ...(parts.api === undefined ? {} : { api: parts.api }),
  });
}

/** An OAuth issuer must be https; plain http is allowed for loopback hosts only (local use). */
function mayIssueFor(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  return url.protocol === 'https:' || ['localhost', '127.0.0.1'].includes(url.hostname);
}
