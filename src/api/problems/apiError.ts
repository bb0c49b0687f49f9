import type { InvalidRequestCause, ProblemCode } from './problemCatalogue.js';

/**
 * The one error type of the API: a stable specification code, mapped to a problem document in one
 * place (the error handler). `cause` and `parameter` only refine the human detail.
 */
export class ApiError extends Error {
  readonly code: ProblemCode;
  readonly invalid: { readonly cause: InvalidRequestCause; readonly name?: string } | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ProblemCode,
    options: { invalid?: { cause: InvalidRequestCause; name?: string }; headers?: Record<string, string> } = {},
  ) {
    super(code);
    this.name = 'ApiError';
    this.code = code;
    this.invalid = options.invalid;
    this.headers = options.headers ?? {};
  }
}

export function invalidRequest(cause: InvalidRequestCause, name?: string): ApiError {
  return new ApiError('common.invalid_request', { invalid: name === undefined ? { cause } : { cause, name } });
}
