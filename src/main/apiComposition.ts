import { systemClock, type Clock } from '../platform/clock.js';
import type { ApiDependencies } from '../api/createApp.js';
import { buildOpenApiDocument } from '../api/openapi/openApiDocument.js';
import { createCursorCodec } from '../api/pagination/cursorCodec.js';
import { createRequestBudget } from '../api/rateLimit/requestBudget.js';
import { v1Operations } from '../api/v1/operations.js';
import type { Config } from '../config/config.js';
import { createPrincipalCache } from '../keys/principalCache.js';
import { createDatabasePool, requestPoolTimeouts, type Database } from '../platform/db.js';
import { createProjectionReader } from '../platform/projectionReader.js';
import type { Logger } from '../platform/logger.js';
import { loadSigningSecret } from '../platform/signingSecret.js';
import type { ExportsRuntime } from './exportsComposition.js';

export const budgetWindowSeconds = 60;

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
  },
): Promise<ApiDependencies & { close(): Promise<void> }> {
  const exportService = options.exports.service;
  if (exportService === undefined) throw new Error('the api role needs the export queue');
  // Requests of the hot operations take one connection of the reader; the others one of this pool.
  // Both are bounded (requestPoolTimeouts) so that a request ends in bounded time while Postgres is away.
  const pool = await createDatabasePool(database.connectionUri, database.kind === 'pglite' ? 2 : 5, database.kind, {
    resetOnRelease: false,
    timeouts: requestPoolTimeouts,
  });
  const reads = createProjectionReader(database.connectionUri, {
    kind: database.kind,
    maximumPoolSize: database.kind === 'pglite' ? 2 : 10,
    logger,
    validateRows: options.validateProjectionRows ?? false,
    timeouts: requestPoolTimeouts,
  });
  const secret = await loadSigningSecret(pool, config.signingSecret).catch(async (error: unknown) => {
    await reads.close();
    await pool.end();
    throw error;
  });
  const budget = createRequestBudget({
    pointsPerWindow: config.rateLimitPerMinute,
    windowSeconds: budgetWindowSeconds,
    logger,
    ...(config.redisUrl === undefined ? {} : { redisUrl: config.redisUrl }),
  });
  logger.info({ store: budget.store, perMinute: config.rateLimitPerMinute }, 'request budget');
  return {
    db: pool,
    reads,
    principals: createPrincipalCache(),
    logger,
    budget,
    budgetWindowSeconds,
    cursors: createCursorCodec(secret),
    operations: v1Operations,
    clock: options.clock ?? systemClock,
    analyticsCaps: config.analyticsCaps,
    exports: exportService,
    ...(options.exports.downloads === undefined ? {} : { downloads: options.exports.downloads }),
    openApi: buildOpenApiDocument(v1Operations, { serverUrl: config.publicBaseUrl ?? options.serverUrl, errorTypeBase: config.errorTypeBase }),
    close: async () => {
      await budget.close();
      await reads.close();
      await pool.end();
    },
  };
}
