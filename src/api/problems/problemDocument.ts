import type { Response } from 'express';
import type { Language } from '../language.js';
import { assistantDetails, invalidRequestDetails, problemCatalogue } from './problemCatalogue.js';
import type { ApiError, ProblemCode } from '../../platform/errors.js';

/** RFC 9457 problem document: exactly these seven fields. */
export type ProblemDocument = {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance: string;
  readonly code: ProblemCode;
  readonly requestId: string;
};

export type ProblemContext = {
  readonly errorTypeBase: string;
  readonly language: Language;
  readonly requestId: string;
  /** The request path without its query string. */
  readonly path: string;
};

export function problemDocument(error: Pick<ApiError, 'code' | 'invalid'>, context: ProblemContext): ProblemDocument {
  const definition = problemCatalogue[error.code];
  const invalid = error.invalid;
  const refined = invalid ? invalidRequestDetails[invalid.cause][context.language].replace('{name}', invalid.name ?? '').replace('{allowed}', (invalid.allowed ?? []).join(', ')) : undefined;
  const onAssistant = context.path === '/mcp' || context.path.startsWith('/mcp#') ? assistantDetails[error.code] : undefined;
  return {
    type: `${context.errorTypeBase}/${error.code}`,
    title: definition.title[context.language],
    status: definition.status,
    detail: refined ?? onAssistant?.[context.language] ?? definition.detail[context.language],
    instance: context.path,
    code: error.code,
    requestId: context.requestId,
  };
}

export function sendProblem(response: Response, error: Pick<ApiError, 'code' | 'invalid' | 'headers'>, context: ProblemContext): void {
  const document = problemDocument(error, context);
  response.status(document.status);
  response.set(error.headers);
  response.set('Content-Language', context.language);
  response.type('application/problem+json');
  response.send(JSON.stringify(document));
}
