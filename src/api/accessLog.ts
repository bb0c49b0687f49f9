import type { RequestHandler } from 'express';
import type { Logger } from '../platform/logger.js';
import { stateOf } from './requestState.js';

/**
 * One log line per finished request: id, method, URL, status, duration, and the tenant and key
 * prefix once known. No header is logged (the Authorization header never is), nor a credential in
 * the query string (`loggableUrl`). Written by hand
 * rather than with pino-http, whose child logger per request cost more than a whole keyed read.
 */
/**
 * Query parameters whose values are credentials wherever they appear: a download link's signature
 * while it is valid, and keys, tokens, codes, secrets or passwords a client put in the query string
 * although only the Authorization header and form bodies are read (the API ignores them, the log
 * must not keep them). Names are compared without case, after percent-decoding.
 */
export const credentialQueryParameters: ReadonlySet<string> = new Set(['signature', 'x-amz-signature', 'x-amz-credential', 'x-amz-security-token']);
const credentialNamePart = /code|secret|token|password|verifier|authorization|key/;

/** The OAuth endpoints of /mcp: every value of their query strings is a credential or names one. */
const oauthPath = /^\/(?:authorize|token|register|revoke)\/?$/;

/**
 * The URL as logged: each credential parameter's value is `[redacted]` (every parameter's, on the
 * OAuth endpoints), everything else as sent.
 */
export function loggableUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const hashStart = url.indexOf('#', queryStart);
  const query = url.slice(queryStart + 1, hashStart === -1 ? undefined : hashStart);
  const everyValue = oauthPath.test(url.slice(0, queryStart));
  const redacted = query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return everyValue || isCredentialName(name) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, queryStart + 1)}${redacted}${hashStart === -1 ? '' : url.slice(hashStart)}`;
}

function isCredentialName(name: string): boolean {
  const decoded = decodedName(name).toLowerCase();
  return credentialNamePart.test(decoded) || credentialQueryParameters.has(decoded);
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).trim();
  } catch {
    return name;
  }
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
        // A refused key: why (the answer is the same 401 for every cause) and its prefix when it has the key format.
        ...(state.refusal === undefined ? {} : { keyRefused: state.refusal.reason, ...(state.refusal.keyPrefix === undefined ? {} : { keyPrefix: state.refusal.keyPrefix }) }),
      };
      const level = accessLogLevel(request.originalUrl.split('?', 1)[0] ?? '', response.statusCode);
      if (logger.isLevelEnabled(level)) logger[level](line, 'request');
    });
    next();
  };
}

/** Paths that probes and scrapers call every few seconds: health, readiness and metrics. */
const probePaths: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The level of a request's line: error for a server error, info otherwise; a probe's answer at
 * debug (a scrape every few seconds by every probe would fill the log), and a 503 of /readyz at
 * warn: the process says it should not take requests (its database is away, or it has not caught
 * up yet), which is no server error.
 */
export function accessLogLevel(path: string, status: number): 'debug' | 'info' | 'warn' | 'error' {
  if (path === '/readyz' && status === 503) return 'warn';
  if (status >= 500) return 'error';
  return probePaths.has(path) ? 'debug' : 'info';
}
