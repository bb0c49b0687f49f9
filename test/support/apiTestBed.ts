import type { HistoryScale } from '../../src/console/history/historyParams.js';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { allProjections } from '../../projections/index.js';
import { Registry } from 'prom-client';
import { createHttpMetrics } from '../../src/api/httpMetrics.js';
import type { Operation } from '../../src/api/v1/operation.js';
import { listen } from '../../src/api/listen.js';
import { loadConfig } from '../../src/config/config.js';
import { createConsoleActions, type ConsoleActions } from '../../src/console/consoleActions.js';
import { checkKeyRequester } from '../../src/console/keyRequester.js';
import { seed } from '../../src/console/seed.js';
import type { TenantSummary } from '../../src/console/seedSummary.js';
import { compareLogPositions, logStart, type EventStore, type LogPosition } from '../../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../../src/eventStore/postgresEventStore.js';
import { issueKey, revokeKey } from '../../src/keys/keyIssuer.js';
import type { BlobStore } from '../../src/exports/blobStore.js';
import type { ExportProcessor } from '../../src/exports/exportQueue.js';
import { composeApi, composeApp, type AssistantOverrides, type ComposedApi } from '../../src/main/apiComposition.js';
import { composeExports, type ExportsRuntime } from '../../src/main/exportsComposition.js';
import { systemClock, type Clock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import { startProjector, type Projector } from '../../src/projecting/projector.js';
import { waitForProjections } from '../../src/projecting/status.js';
import { createDatabasePool } from '../../src/platform/db.js';
import type { ReadRouter } from '../../src/platform/readReplicas.js';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from './databases.js';
import { createResponseValidator, type ResponseValidator } from './openApiValidator.js';
import { freePort } from './tcpProxy.js';
import { testRedisUrl } from './services.js';
import { fetchRetryingStaleConnection } from './staleConnectionRetry.js';

export const testAsOf = '2026-11-01T00:00:00.000Z';
export const testErrorTypeBase = 'https://problems.test.example/v1';

export type ApiResponse = {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body (undefined when the body is not JSON). */
  readonly body: unknown;
};

export type ApiTestBed = {
  readonly baseUrl: string;
  readonly database: TestDatabase;
  /** The bed's event store: what a test appends through it, `settle()` waits for. */
  readonly eventStore: EventStore;
  readonly console: ConsoleActions;
  /** The seeded workspaces: two by default, with the same shape and different ids. */
  readonly tenants: readonly TenantSummary[];
  /** Every log line the API process wrote, as JSON text. */
  readonly logs: string[];
  /** The export parts (queue, store, maintenance) of the API under test. */
  readonly exports: ExportsRuntime;
  /** The DATA_DIR of the API under test (local export files live under it). */
  readonly dataDir: string;
  /** Issues a key with these scopes for a member of the tenant: its owner (first member) unless `memberId` is given. */
  issueKey(tenant: TenantSummary, scopes: readonly string[], memberId?: string): Promise<string>;
  revokeKey(key: string): Promise<void>;
  /**
   * Every answer is checked against the OpenAPI document the API serves (it throws when it does not
   * match); `validate: false` is for a request deliberately outside the contract, whose error
   * answers must still be problem documents.
   */
  request(path: string, options?: { key?: string; headers?: Record<string, string>; method?: string; body?: string; validate?: boolean }): Promise<ApiResponse>;
  /** Waits until the projections have applied everything appended so far. */
  settle(): Promise<void>;
  /** Where the API's reads go (the primary only, unless the bed was given a standby). */
  readonly router: ReadRouter;
  /** The registry of the API's metrics (what its /metrics serves). */
  readonly metrics: Registry;
  close(): Promise<void>;
};

/** Removes a bed's BullMQ queue from the shared Redis (through the real server, even if the bed used a proxy). */
async function removeQueue(name: string): Promise<void> {
  const { hostname, port } = new URL(testRedisUrl);
  const queue = new Queue(name, { connection: { host: hostname, port: Number(port), maxRetriesPerRequest: 1 } });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
  }
}

/** A database that exists already (a test cluster's primary); closing ends the bed's pool only. */
async function existingTestDatabase(url: string): Promise<TestDatabase> {
  const pool = await createDatabasePool(url, 10);
  return { kind: 'postgres', url, pool, close: () => pool.end() };
}

/** Paths outside the /v1 contract that tests may still call through `request`. */
const pathsOutsideTheContract = ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs'];

const validators = new WeakMap<object, ResponseValidator>();

/** One validator per OpenAPI document (the one the API under test serves). */
function validatorFor(document: object): ResponseValidator {
  const known = validators.get(document);
  if (known !== undefined) return known;
  const created = createResponseValidator(document, { errorTypeBase: testErrorTypeBase, unvalidatedPaths: pathsOutsideTheContract });
  validators.set(document, created);
  return created;
}

/**
 * A real API on an ephemeral port over a fresh Postgres database seeded with the small
 * deterministic history, with a running projector, and logs captured in memory.
 */
export async function createApiTestBed(
  options: {
    tenants?: number;
    rateLimitPerMinute?: number;
    redisUrl?: string;
    seed?: number;
    /** History size (small by default) and length in days (30). */
    scale?: HistoryScale;
    days?: number;
    /** The API's clock (analytics asOf); the system clock by default. */
    clock?: Clock;
    /** Further settings, e.g. small analytics caps, or S3_* for the S3 file store. */
    env?: Readonly<Record<string, string>>;
    /** Wraps the export file store of the builds (to make one fail). */
    wrapExportStore?: (store: BlobStore) => BlobStore;
    /** Wraps each export build (to hold one until the test lets it run). */
    wrapExportProcessor?: (processor: ExportProcessor) => ExportProcessor;
    /** Runs BullMQ workers in this process when REDIS_URL is set (default true); false leaves jobs queued. */
    exportWorker?: boolean;
    /**
     * A primary and hot standby of the test's own (startStandbyCluster): the bed's database is the
     * primary's, and the API reads from the standby (READ_DATABASE_URL). Left running at close.
     */
    standby?: { readonly primaryUrl: string; readonly standbyUrl: string };
    /** The cluster the bed's database is made in (a file's own, startOwnCluster) instead of the shared one. */
    postgresAdminUrl?: string;
    /** The operations of /v1 and of the assistant's tools, in place of production's (`v1Operations`). */
    operations?: readonly Operation[];
    /** Parts of the assistant replaced for the test (see AssistantOverrides). */
    assistant?: AssistantOverrides;
  } = {},
): Promise<ApiTestBed> {
  const database =
    options.standby === undefined
      ? await createPostgresTestDatabase(options.postgresAdminUrl === undefined ? {} : { adminUrl: options.postgresAdminUrl })
      : await existingTestDatabase(options.standby.primaryUrl);
  const eventStore = createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url });
  const logs: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logs.push(chunk.toString('utf8'));
        callback();
      },
    }),
  );
  let projector: Projector | undefined;
  let server: Server | undefined;
  let api: ComposedApi | undefined;
  let exports: ExportsRuntime | undefined;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-bed-'));
  try {
    // The log's visible head lags behind a commit while any transaction of the cluster is open, so
    // settling waits for the position of the bed's own last append (the seed's included) too.
    let lastAppended: LogPosition = logStart;
    const noteAppended = (position: LogPosition) => {
      if (compareLogPositions(position, lastAppended) > 0) lastAppended = position;
    };
    const trackedStore: EventStore = {
      ...eventStore,
      append: async (...args) => {
        const result = await eventStore.append(...args);
        noteAppended(result.position);
        return result;
      },
      appendMany: async (writes) => {
        const results = await eventStore.appendMany(writes);
        for (const result of results) noteAppended(result.position);
        return results;
      },
    };
    const summary = await seed({ eventStore: trackedStore, params: {
        seed: options.seed ?? 11,
        tenants: options.tenants ?? 2,
        days: options.days ?? 30,
        scale: options.scale ?? 'small',
        asOf: testAsOf,
      },
    });
    projector = startProjector({ pool: database.pool, eventStore, projections: allProjections, logger: silentLogger, lockRetryMs: 200 });
    const config = loadConfig({
      DATABASE_URL: database.url,
      ERROR_TYPE_BASE: testErrorTypeBase,
      RATE_LIMIT_PER_MINUTE: String(options.rateLimitPerMinute ?? 100_000),
      ...(options.redisUrl === undefined ? {} : { REDIS_URL: options.redisUrl }),
      DATA_DIR: dataDir,
      // A primary and standby without an HA manager: the service keeps synchronous_standby_names itself.
      ...(options.standby === undefined ? {} : { READ_DATABASE_URL: options.standby.standbyUrl, READ_REPLICA_STEWARD: 'true' }),
      // Test files share one Redis: each bed has its own export queue.
      EXPORT_QUEUE_NAME: `test-exports-${randomBytes(6).toString('hex')}`,
      ...options.env,
    });
    // Local download links need the address before the server exists: a free port, bound a moment later.
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const clock = options.clock ?? systemClock;
    exports = await composeExports(config, logger, database.pool, {
      api: true,
      worker: options.exportWorker ?? true,
      serverUrl: baseUrl,
      clock,
      schedule: false,
      ...(options.wrapExportStore === undefined ? {} : { wrapStore: options.wrapExportStore }),
      ...(options.wrapExportProcessor === undefined ? {} : { wrapProcessor: options.wrapExportProcessor }),
    });
    // Composed as `serve` composes it (metered budget, metrics, routing); only readiness is the bed's own.
    const registry = new Registry();
    const httpMetrics = createHttpMetrics(registry);
    api = await composeApi(config, logger, { connectionUri: database.url, kind: 'postgres' }, {
      serverUrl: baseUrl,
      clock,
      exports,
      httpMetrics,
      ...(options.operations === undefined ? {} : { operations: options.operations }),
      ...(options.assistant === undefined ? {} : { assistant: options.assistant }),
    });
    const app = composeApp(config, logger, { readiness: async () => ({ ready: true, checks: {} }), registry, httpMetrics, api });
    server = await listen(app, { port, host: '127.0.0.1', errorTypeBase: testErrorTypeBase });
    const running = { projector, server, api, exports };
    const settle = async () => {
      const head = await eventStore.head();
      const atLeast = compareLogPositions(head.position, lastAppended) > 0 ? head.position : lastAppended;
      await waitForProjections(database.pool, eventStore, allProjections, 60, { pollMs: 50, atLeast });
    };
    await settle();
    return {
      baseUrl,
      database,
      eventStore: trackedStore,
      console: createConsoleActions({ eventStore: trackedStore, clock: systemClock }),
      tenants: summary.tenants,
      logs,
      exports,
      dataDir,
      issueKey: async (tenant, scopes, requester) => {
        const memberId = requester ?? tenant.memberIds[0];
        if (memberId === undefined) throw new Error('the tenant has no member');
        const issued = await issueKey(
          { pool: database.pool, clock: systemClock, checkRequester: (w, m) => checkKeyRequester(eventStore, w, m) },
          { workspaceId: tenant.workspaceId, memberId, scopes, name: 'test' },
        );
        return issued.key;
      },
      revokeKey: async (key) => {
        await revokeKey({ pool: database.pool, clock: systemClock }, key.slice(0, 12));
      },
      request: async (path, requestOptions = {}) => {
        const headers: Record<string, string> = { ...requestOptions.headers };
        if (requestOptions.key !== undefined) headers.authorization = `Bearer ${requestOptions.key}`;
        const response = await fetchRetryingStaleConnection(`${baseUrl}${path}`, {
          method: requestOptions.method ?? 'GET',
          headers,
          ...(requestOptions.body === undefined ? {} : { body: requestOptions.body }),
        });
        const text = await response.text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const validator = validatorFor(running.api.openApi);
        const sent = new URL(response.url === '' ? `${baseUrl}${path}` : response.url);
        const answer = { method: requestOptions.method ?? 'GET', path: `${sent.pathname}${sent.search}`, status: response.status, headers: response.headers, body, text };
        if (requestOptions.validate === false) validator.validateProblemOnly(answer);
        else validator.validate(answer);
        return { status: response.status, headers: response.headers, text, body };
      },
      settle,
      router: running.api.router,
      metrics: registry,
      close: async () => {
        await new Promise<void>((resolve) => {
          running.server.close(() => resolve());
          running.server.closeAllConnections();
        });
        await running.api.close();
        await running.exports.close();
        if (config.redisUrl !== undefined) await removeQueue(config.exportQueueName);
        await running.projector.stop();
        await eventStore.close();
        await database.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    server?.close();
    await api?.close();
    await exports?.close();
    await projector?.stop();
    await eventStore.close();
    await database.close();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
