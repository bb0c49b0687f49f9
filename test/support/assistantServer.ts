import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { Writable } from 'node:stream';
import type { DatabasePool } from 'slonik';
import type { Operation } from '../../src/api/v1/operation.js';
import { v1Operations } from '../../src/api/v1/operations.js';
import { loadConfig, type TrustProxy } from '../../src/config/config.js';
import { listen } from '../../src/api/listen.js';
import { createCursorCodec } from '../../src/api/pagination/cursorCodec.js';
import { errorHandler } from '../../src/api/problems/errorHandler.js';
import { refuseTooManyQueryParameters } from '../../src/api/queryParameters.js';
import { createLimits, createRequestBudget, type Limits } from '../../src/api/rateLimit/requestBudget.js';
import { requestState } from '../../src/api/requestState.js';
import { addressLimitDefaults, type AddressLimitSettings } from '../../src/mcp/addressLimits.js';
import { assistantRoutes } from '../../src/mcp/assistantRoutes.js';
import { loadSigningSecret } from '../../src/platform/signingSecret.js';
import { systemClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import { testErrorTypeBase, type ApiTestBed } from './apiTestBed.js';
import { silentLogger } from './databases.js';

export type AssistantServer = {
  /** `http://127.0.0.1:<port>` of this server. */
  readonly origin: string;
  /** Its `/mcp`. */
  readonly url: string;
  /** What its assistant routes logged, as JSON lines. */
  readonly logs: string[];
  close(): Promise<void>;
};

export type AssistantServerOptions = {
  readonly failingTransport?: boolean;
  readonly operations?: readonly Operation[];
  /** The request budget of a sign-in (2 unless given). */
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
 * The assistant routes on a server of their own over the bed's database and base URL (so the
 * bed's tokens are valid there), with a small request budget and, when asked, small per-address
 * limits, a shared limit store, a failing transport or database, or a trusted proxy.
 */
export async function startAssistant(bed: ApiTestBed, options: AssistantServerOptions = {}): Promise<AssistantServer> {
  const exportService = bed.exports.service;
  if (exportService === undefined) throw new Error('the bed has an export service');
  const budget = await createRequestBudget({ pointsPerWindow: options.budgetPoints ?? 2, windowSeconds: 60, logger: silentLogger });
  const limits = options.limits ?? (await createLimits({ logger: silentLogger }));
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
  const app = express();
  app.set('query parser', 'simple');
  app.set('trust proxy', options.trustProxy ?? false);
  app.use(requestState);
  app.use(refuseTooManyQueryParameters);
  app.use(
    assistantRoutes({
      db: options.db ?? bed.database.pool,
      budget,
      operations: options.operations ?? v1Operations,
      cursors: createCursorCodec(await loadSigningSecret(bed.database.pool, undefined)),
      clock: systemClock,
      analyticsCaps: loadConfig({}).analyticsCaps,
      exports: exportService,
      logger,
      errorTypeBase: testErrorTypeBase,
      version: 'test',
      baseUrl: () => bed.baseUrl,
      limits,
      addressLimits: { ...addressLimitDefaults, ...options.addressLimits },
      ...(options.limitKeyPrefix === undefined ? {} : { limitKeyPrefix: options.limitKeyPrefix }),
      ...(options.failingTransport === true
        ? {
            createTransport: () => {
              const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
              transport.handleRequest = () => Promise.reject(new Error('transport broke'));
              return transport;
            },
          }
        : {}),
    }),
  );
  app.use(errorHandler(testErrorTypeBase, silentLogger));
  const server = await listen(app, { port: 0, host: '127.0.0.1', errorTypeBase: testErrorTypeBase });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const origin = `http://127.0.0.1:${address.port}`;
  return {
    origin,
    url: `${origin}/mcp`,
    logs,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await budget.close();
      if (options.limits === undefined) await limits.close();
    },
  };
}
