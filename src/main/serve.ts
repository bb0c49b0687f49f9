import type { Server } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { allProjections } from '../../projections/index.js';
import { createHttpMetrics } from '../api/httpMetrics.js';
import { listen } from '../api/listen.js';
import type { Config } from '../config/config.js';
import type { Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import { bulkLoadOf } from '../projecting/bulkLoad.js';
import { registerPendingExportMetric } from '../exports/pendingExportMetric.js';
import { embeddedHost, recordHttpPort } from '../platform/embeddedHostRecord.js';
import { checkPortFree, portError } from '../platform/portCheck.js';
import { registerProjectionMetrics } from '../projecting/projectionMetrics.js';
import { startProjector, type Projector } from '../projecting/projector.js';
import { projectionsReport } from '../projecting/status.js';
import { composeApi, composeApp } from './apiComposition.js';
import { composeExports, type ExportsRuntime } from './exportsComposition.js';
import type { DemoSession } from './demo.js';
import { cachedFor, createReadiness, registerReadinessMetric, registerReadReplicaMetrics } from './readiness.js';
import { openServices } from './services.js';

export const allRoles = ['api', 'projector', 'worker'] as const;
export type Role = (typeof allRoles)[number];

/** How long running requests get to finish after SIGTERM or SIGINT. */
export const requestDrainMs = 10_000;
/** After SIGTERM or SIGINT the process has ended within this, cleanly or not. */
export const shutdownGraceMs = 20_000;

export type ServeOptions = { port: number; roles: readonly Role[]; demo: boolean };

/**
 * Runs the service until SIGINT or SIGTERM, then stops taking requests, lets running ones finish
 * and closes the database. Resolves with the exit code.
 */
export async function serve(config: Config, logger: Logger, clock: Clock, options: ServeOptions): Promise<number> {
  // Before anything else starts (migrations, projector, worker): a busy port fails at once.
  const portHolder = async () => {
    if (config.databaseUrl !== undefined) return undefined;
    const host = await embeddedHost(config.dataDir);
    return host?.httpPort === options.port ? `process ${host.pid} (the supply-api serving DATA_DIR ${config.dataDir})` : undefined;
  };
  await checkPortFree(options.port, portHolder);
  const services = await openServices(config, logger, clock, { mustHostEmbedded: true });
  let server: Server | undefined;
  let projector: Projector | undefined;
  let api: Awaited<ReturnType<typeof composeApi>> | undefined;
  let exports: ExportsRuntime | undefined;
  let demo: DemoSession | undefined;
  try {
    // The demo's seeding (the console's history generator) is loaded only for `--demo`.
    const demoModule = options.demo ? await import('./demo.js') : undefined;
    if (demoModule !== undefined) {
      demo = await demoModule.prepareDemo(services);
    }
    const { pool } = services.database;
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const httpMetrics = createHttpMetrics(registry);
    let serverUrl = `http://localhost:${options.port}`;
    if (options.roles.includes('api') || options.roles.includes('worker')) {
      exports = await composeExports(config, logger, pool, {
        api: options.roles.includes('api'),
        worker: options.roles.includes('worker'),
        // Local download links point at the port actually bound (--port 0 picks one).
        serverUrl: () => serverUrl,
        clock,
        registry,
      });
    }
    const report = cachedFor(1000, () => projectionsReport(pool, services.eventStore, allProjections));
    const observer = registerProjectionMetrics(registry, report);
    registerPendingExportMetric(registry, pool, clock);
    if (options.roles.includes('projector')) {
      projector = startProjector({
        pool,
        eventStore: services.eventStore,
        projections: allProjections,
        logger,
        observer,
        batchSize: config.projectorBatchSize,
        ...bulkLoadOf(services.database),
      });
    }
    if (options.roles.includes('api') && exports !== undefined) {
      api = await composeApi(config, logger, services.database, { serverUrl, clock, exports, currentServerUrl: () => serverUrl, httpMetrics });
    }
    // Every role answers health, readiness and metrics; /v1 comes with the api role.
    const readiness = createReadiness({ database: pool, ...(api === undefined ? {} : { requests: api.db }) }, report, {
      servesReads: api !== undefined,
      ...(api === undefined ? {} : { router: api.router }),
    });
    registerReadinessMetric(registry, readiness);
    if (api !== undefined) registerReadReplicaMetrics(registry, api.router);
    const app = composeApp(config, logger, { readiness, registry, httpMetrics, ...(api === undefined ? {} : { api }) });
    server = await listen(app, { port: options.port, errorTypeBase: config.errorTypeBase }).catch(async (error: unknown) => {
      // Taken since the check (another process started meanwhile).
      throw error instanceof Error && 'code' in error ? await portError(options.port, error as NodeJS.ErrnoException, portHolder) : error;
    });
    const address = server.address();
    if (typeof address === 'object' && address !== null) serverUrl = `http://localhost:${address.port}`;
    if (services.database.kind === 'pglite' && typeof address === 'object' && address !== null) await recordHttpPort(config.dataDir, address.port);
    if (demoModule !== undefined && demo !== undefined && api?.assistant !== undefined) demoModule.printAssistantSignIn(demo, config.publicBaseUrl ?? serverUrl);
    logger.info({ port: typeof address === 'object' && address ? address.port : options.port, roles: options.roles }, 'serving');
  } catch (error) {
    await projector?.stop();
    server?.close();
    await api?.close();
    await exports?.close();
    await services.close();
    throw error;
  }

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  logger.info({ signal }, 'shutting down');
  // Whatever hangs (a database that went away mid-close, a queue that cannot reach Redis), the
  // process ends within its grace period. Unref'd: a clean close exits without waiting for it.
  setTimeout(() => {
    logger.error({ graceMs: shutdownGraceMs }, 'shutdown did not finish within its grace period; exiting');
    process.exit(1);
  }, shutdownGraceMs).unref();
  const closing = server;
  if (closing) {
    await new Promise<void>((resolve) => {
      closing.close(() => resolve());
      closing.closeIdleConnections();
      // Requests still running by then are cut so that the rest of the shutdown has time.
      setTimeout(() => closing.closeAllConnections(), requestDrainMs).unref();
    });
  }
  // Builds under way finish before the database closes.
  await exports?.close();
  await projector?.stop();
  await api?.close();
  await services.close();
  logger.info('stopped');
  return 0;
}
