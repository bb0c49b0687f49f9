import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { messageClassesOf } from './expressMessages.js';
import { clientErrorHandler } from './problems/clientErrorHandler.js';
import { answerExpectations } from './requestBodies.js';

/**
 * How long a client may take to send its request. A slow client (or a slowloris attack: many
 * sockets that each trickle a header byte now and then) holds a socket, not a request: these close
 * it. Node checks them every `checkIntervalMs`.
 */
export const clientTimeouts = {
  /** Request line and headers complete. */
  headersMs: 10_000,
  /** The whole request, body included (a /v1 body is at most 16 KiB). */
  requestMs: 30_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: 5_000,
  checkIntervalMs: 1_000,
} as const;

export type ClientTimeouts = { readonly headersMs: number; readonly requestMs: number; readonly keepAliveMs: number; readonly checkIntervalMs: number };

/** Starts the HTTP server of an app; requests Node cannot parse, or that come too slowly, still get a problem document. */
export function listen(app: Express, options: { port: number; host?: string; errorTypeBase: string; timeouts?: ClientTimeouts }): Promise<Server> {
  const timeouts = options.timeouts ?? clientTimeouts;
  return new Promise<Server>((resolve, reject) => {
    const server = createServer(
      {
        headersTimeout: timeouts.headersMs,
        requestTimeout: timeouts.requestMs,
        keepAliveTimeout: timeouts.keepAliveMs,
        connectionsCheckingInterval: timeouts.checkIntervalMs,
        ...messageClassesOf(app),
      },
      app,
    );
    server.on('clientError', clientErrorHandler(options.errorTypeBase));
    answerExpectations(server, app);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
    if (options.host === undefined) server.listen(options.port);
    else server.listen(options.port, options.host);
  });
}
