import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../../platform/logger.js';
import { problemContextOf } from '../requestState.js';
import { ApiError, databaseUnavailableRetrySeconds, invalidRequest, serviceUnavailable } from '../../platform/errors.js';
import { isDatabaseUnreachable } from '../../platform/primaryLocator.js';
import { sendProblem } from './problemDocument.js';

/** Unknown paths, outside /v1 as inside: 404 `common.not_found`. */
export const notFound: RequestHandler = () => {
  throw new ApiError('common.not_found');
};

/**
 * The one place errors become problem documents. An ApiError keeps its code; errors of the HTTP
 * layer (undecodable path, unreadable or oversized body) get theirs; anything else is logged with
 * the request id and answered 500 `common.internal_error`, with nothing internal in it; a database
 * that cannot be reached is 503 `common.service_unavailable` with Retry-After.
 */
export function errorHandler(errorTypeBase: string, logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => {
    const known = knownError(error);
    const context = problemContextOf(request, response, errorTypeBase);
    if (known === undefined) {
      logger.error({ err: error, requestId: context.requestId, path: context.path }, 'request failed');
    } else if (known.code === 'common.service_unavailable' && !(error instanceof ApiError)) {
      logger.warn({ err: error, requestId: context.requestId, path: context.path }, 'request failed: no database could be reached');
    }
    if (response.headersSent) {
      response.destroy();
      return;
    }
    sendProblem(response, known ?? new ApiError('common.internal_error'), context);
  };
}

function knownError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  // The database could not be reached (down, failing over, no primary found): the service is
  // unavailable for a moment, which is no fault of the request.
  if (isDatabaseUnreachable(error)) return serviceUnavailable(databaseUnavailableRetrySeconds);
  // Express's router reports a path segment that is not valid percent-encoding as a URIError:
  // such a path names nothing, like any unknown path.
  if (error instanceof URIError) return new ApiError('common.not_found');
  // Errors of the body reader (body-parser, through Express) carry a `type`, a client-error
  // `status` and an English message: only the code is kept, the message never reaches the answer.
  const type = typeof error === 'object' && error !== null && 'type' in error ? (error as { type: unknown }).type : undefined;
  const status = typeof error === 'object' && error !== null && 'status' in error ? (error as { status: unknown }).status : undefined;
  if (type === 'entity.too.large' || status === 413) return new ApiError('common.payload_too_large');
  if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported' || type === 'request.size.invalid' || status === 415) return invalidRequest('body');
  if (type === 'request.aborted' || status === 400) return invalidRequest('http');
  return undefined;
}
