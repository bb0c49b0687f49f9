import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Registry } from 'prom-client';
import { Writable } from 'node:stream';
import type { DatabasePool } from 'slonik';
import { createHttpMetrics } from '../../src/api/httpMetrics.js';
import { listen } from '../../src/api/listen.js';
import type { Limits } from '../../src/api/rateLimit/requestBudget.js';
import type { Operation } from '../../src/api/v1/operation.js';
import { loadConfig, type TrustProxy } from '../../src/config/config.js';
import { composeApi, composeApp, type AssistantOverrides } from '../../src/main/apiComposition.js';
import { addressLimitDefaults, type AddressLimitSettings } from '../../src/mcp/addressLimits.js';
import { createLogger } from '../../src/platform/logger.js';
import { testErrorTypeBase, type ApiTestBed } from './apiTestBed.js';

export type AssistantServer = {
  /** `http://127.0.0.1:<port>` of this server. */
  readonly origin: string;
  /** Its `/mcp`. */
  readonly url: string;
  /** What its assistant routes logged, as JSON lines. */
  readonly logs: string[];
  /** Its metrics registry (what its /metrics serves). */
  readonly metrics: Registry;
  close(): Promise<void>;
};

export type AssistantServerOptions = {
  readonly failingTransport?: boolean;
  readonly operations?: readonly Operation[];
  /** The request budget of a sign-in (RATE_LIMIT_PER_MINUTE; 2 unless given). */
  readonly budgetPoints?: number;
  /** Where the per-address limits are counted (memory of this server unless given). */
  readonly limits?: Limits;
  readonly limitKeyPrefix?: string;
  readonly addressLimits?: Partial<AddressLimitSettings>;
  /** The database the assistant uses (the bed's unless given). */
  readonly db?: DatabasePool;
  readonly trustProxy?: TrustProxy;
};

/**
 * A second API process over the bed's database, composed as `serve` composes one (composeApi and
 * composeApp: metered budget, metrics, routing), whose assistant takes the bed's base URL (so the
 * bed's tokens are valid there). What differs from production is passed in visibly: a small request
 * budget, small per-address limits, a shared limit store, a failing transport, operations or
 * database, a trusted proxy.
 */
export async function startAssistant(bed: ApiTestBed, options: AssistantServerOptions = {}): Promise<AssistantServer> {
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
  const loaded = loadConfig({
    DATABASE_URL: bed.database.url,
    ERROR_TYPE_BASE: testErrorTypeBase,
    RATE_LIMIT_PER_MINUTE: String(options.budgetPoints ?? 2),
    DATA_DIR: bed.dataDir,
  });
  const config = options.trustProxy === undefined ? loaded : { ...loaded, trustProxy: options.trustProxy };
  const assistant: AssistantOverrides = {
    addressLimits: { ...addressLimitDefaults, ...options.addressLimits },
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.limitKeyPrefix === undefined ? {} : { limitKeyPrefix: options.limitKeyPrefix }),
    ...(options.db === undefined ? {} : { db: options.db }),
    ...(options.failingTransport === true
      ? {
          createTransport: () => {
            const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
            transport.handleRequest = () => Promise.reject(new Error('transport broke'));
            return transport;
          },
        }
      : {}),
  };
  const registry = new Registry();
  const httpMetrics = createHttpMetrics(registry);
  const api = await composeApi(config, logger, { connectionUri: bed.database.url, kind: 'postgres' }, {
    serverUrl: bed.baseUrl,
    exports: bed.exports,
    httpMetrics,
    assistant,
    ...(options.operations === undefined ? {} : { operations: options.operations }),
  });
  const app = composeApp(config, logger, { readiness: async () => ({ ready: true, checks: {} }), registry, httpMetrics, api });
  const server = await listen(app, { port: 0, host: '127.0.0.1', errorTypeBase: testErrorTypeBase }).catch(async (error: unknown) => {
    await api.close();
    throw error;
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const origin = `http://127.0.0.1:${address.port}`;
  return {
    origin,
    url: `${origin}/mcp`,
    logs,
    metrics: registry,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await api.close();
    },
  };
}
