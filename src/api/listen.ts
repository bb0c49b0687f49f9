import type { Server } from 'node:http';
import type { Express } from 'express';
import { clientErrorHandler } from './problems/clientErrorHandler.js';

/** Starts the HTTP server of an app; requests Node cannot parse still get a problem document. */
export function listen(app: Express, options: { port: number; host?: string; errorTypeBase: string }): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const server = options.host === undefined ? app.listen(options.port) : app.listen(options.port, options.host);
    server.on('clientError', clientErrorHandler(options.errorTypeBase));
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}
