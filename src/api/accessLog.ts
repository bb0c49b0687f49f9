import type { RequestHandler } from 'express';
import type { Logger } from '../platform/logger.js';
import { stateOf } from './requestState.js';

/**
 * One log line per finished request: id, method, URL, status, duration, and the tenant and key
 * prefix once known. No header is logged (the Authorization header never is), nor a link's signature. Written by hand
 * rather than with pino-http, whose child logger per request cost more than a whole keyed read.
 */
/** A download link's signature is a credential while it is valid: it is logged as `[redacted]`. */
export function loggableUrl(url: string): string {
  return url.replace(/([?&]signature=)[^&#]*/gi, '$1[redacted]');
}

export function accessLog(logger: Logger): RequestHandler {
  return (request, response, next) => {
    if (!logger.isLevelEnabled('info')) {
      next();
      return;
    }
    const started = performance.now();
    response.once('finish', () => {
      const state = stateOf(response);
      const line = {
        requestId: state.requestId,
        method: request.method,
        url: loggableUrl(request.originalUrl),
        status: response.statusCode,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...(state.principal === undefined ? {} : { tenantId: state.principal.tenantId, keyPrefix: state.principal.prefix }),
      };
      if (response.statusCode >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    });
    next();
  };
}
