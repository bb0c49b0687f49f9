import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

/**
 * Checks real responses against an OpenAPI 3.1 document: the operation (path template and method),
 * the documented status, the content type, the body (JSON Schema 2020-12, `$ref`s into
 * `components.schemas`), and the documented response headers, each of which must be present
 * unless the document marks it `required: false` (the document lists headers only where the API
 * sends them: rate-limit headers on budgeted answers, `x-request-id` on every answer).
 *
 * Answers to paths or methods the document does not have must still be problem documents matching
 * `components.schemas.Problem`: 404 on an unknown path, 405 (with `Allow`) on a known path, and the
 * statuses of `options.anywhereStatuses` (413 by default) on any path.
 */

/** A response as the validator needs it; `path` is the request path as sent, query string included. */
export type ResponseToValidate = {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly headers: HeaderSource;
  /** The parsed JSON body; undefined when there is no body or it is not JSON. */
  readonly body: unknown;
  /** The raw body text, when known: lets the validator tell an empty body from one that is not JSON. */
  readonly text?: string;
  /** The Content-Type header; taken from `headers` when absent. */
  readonly contentType?: string | null;
};

export type HeaderSource = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export type ResponseValidatorOptions = {
  /** When set, a problem's `type` must be exactly `${errorTypeBase}/${code}`. */
  readonly errorTypeBase?: string;
  /** Statuses any path and method may answer with a problem document (default: 413). */
  readonly anywhereStatuses?: readonly number[];
  /** Paths outside the contract (e.g. `/healthz`): their answers are not checked at all. */
  readonly unvalidatedPaths?: readonly string[];
};

export type ResponseValidator = {
  /** Throws a descriptive Error when the response does not match the document. */
  validate(response: ResponseToValidate): void;
  /**
   * For requests deliberately outside the contract: only checks that an error answer (status >= 400
   * or a problem content type) is a problem document matching `Problem`.
   */
  validateProblemOnly(response: ResponseToValidate): void;
};

export const problemContentType = 'application/problem+json';

const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Json = Record<string, unknown>;

type DocumentedResponse = {
  readonly key: string;
  readonly headers: ReadonlyMap<string, { readonly name: string; readonly required: boolean; readonly check: ValidateFunction }>;
  /** Media type → body validator. */
  readonly content: ReadonlyMap<string, ValidateFunction>;
};

type DocumentedOperation = {
  readonly method: string;
  readonly template: string;
  readonly label: string;
  readonly responses: ReadonlyMap<string, DocumentedResponse>;
};

type DocumentedPath = {
  readonly template: string;
  readonly pattern: RegExp;
  /** Method (upper case) → operation. */
  readonly operations: ReadonlyMap<string, DocumentedOperation>;
};

const componentsId = 'https://openapi.test/document.json';

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function recordAt(value: unknown, ...keys: string[]): Json | undefined {
  let current: unknown = value;
  for (const key of keys) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return isRecord(current) ? current : undefined;
}

/** `$ref`s of the document point into the document; in a compiled schema they point into the registered copy. */
function retarget(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(retarget);
  if (!isRecord(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${componentsId}${value}` : retarget(value)]),
  );
}

function decodes(path: string): boolean {
  try {
    for (const segment of path.split('/')) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `/v1/orders/{orderId}` → a pattern matching one non-empty path segment per parameter. */
function templatePattern(template: string): RegExp {
  const parts = template.split(/(\{[^}]+\})/).map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : escapeRegExp(part)));
  return new RegExp(`^${parts.join('')}$`);
}

function headerValue(headers: HeaderSource, name: string): string | undefined {
  if ('get' in headers && typeof headers.get === 'function') {
    return headers.get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const found = Object.entries(record).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
  if (found === undefined) return undefined;
  return typeof found === 'string' ? found : found.join(', ');
}

function mediaTypeOf(contentType: string | null | undefined): string | undefined {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === undefined || mediaType === '' ? undefined : mediaType;
}

function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((error) => {
      const where = error.instancePath === '' ? '(root)' : error.instancePath;
      const extra = error.keyword === 'additionalProperties' ? ` "${String((error.params as { additionalProperty?: unknown }).additionalProperty)}"` : '';
      return `${where} ${error.message ?? error.keyword}${extra}`;
    })
    .join('; ');
}

function snippet(response: ResponseToValidate): string {
  const text = response.text ?? (response.body === undefined ? '' : JSON.stringify(response.body));
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

function pathOnly(path: string): string {
  return path.split('?', 1)[0] ?? path;
}

export function createResponseValidator(document: object, options: ResponseValidatorOptions = {}): ResponseValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  ajvFormats.default(ajv);
  const components = recordAt(document, 'components') ?? {};
  // Registered once, so `$ref`s resolve from any schema compiled below.
  ajv.addSchema({ $id: componentsId, components: { schemas: recordAt(components, 'schemas') ?? {} } });

  const resolve = (value: unknown): Json | undefined => {
    let current: unknown = value;
    for (let depth = 0; depth < 10 && isRecord(current) && typeof current.$ref === 'string'; depth += 1) {
      const ref: string = current.$ref;
      if (!ref.startsWith('#/')) throw new Error(`the OpenAPI document has a $ref this validator does not follow: ${ref}`);
      current = recordAt(document, ...ref.slice(2).split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')));
    }
    return isRecord(current) ? current : undefined;
  };

  const compile = (schema: unknown, where: string): ValidateFunction => {
    try {
      return ajv.compile(isRecord(schema) ? (retarget(schema) as Json) : {});
    } catch (error) {
      throw new Error(`cannot compile the schema of ${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const problemSchema = recordAt(components, 'schemas', 'Problem');
  if (problemSchema === undefined) throw new Error('the OpenAPI document has no components.schemas.Problem');
  const checkProblem = compile({ $ref: '#/components/schemas/Problem' }, 'components.schemas.Problem');

  const paths: DocumentedPath[] = Object.entries(recordAt(document, 'paths') ?? {}).map(([template, item]) => {
    const operations = new Map<string, DocumentedOperation>();
    for (const method of httpMethods) {
      const operation = recordAt(item, method);
      if (operation === undefined) continue;
      const label = `${method.toUpperCase()} ${template}${typeof operation.operationId === 'string' ? ` (${operation.operationId})` : ''}`;
      const responses = new Map<string, DocumentedResponse>();
      for (const [key, raw] of Object.entries(recordAt(operation, 'responses') ?? {})) {
        const response = resolve(raw) ?? {};
        const headers = new Map<string, { name: string; required: boolean; check: ValidateFunction }>();
        for (const [name, rawHeader] of Object.entries(recordAt(response, 'headers') ?? {})) {
          const header = resolve(rawHeader) ?? {};
          // Content-Type is described by `content`, never as a header (OpenAPI ignores it there).
          if (name.toLowerCase() === 'content-type') continue;
          headers.set(name.toLowerCase(), { name, required: header.required !== false, check: compile(header.schema, `${label} ${key} header ${name}`) });
        }
        const content = new Map<string, ValidateFunction>();
        for (const [mediaType, media] of Object.entries(recordAt(response, 'content') ?? {})) {
          content.set(mediaType.toLowerCase(), compile(recordAt(media, 'schema') ?? {}, `${label} ${key} ${mediaType}`));
        }
        responses.set(key, { key, headers, content });
      }
      operations.set(method.toUpperCase(), { method: method.toUpperCase(), template, label, responses });
    }
    return { template, pattern: templatePattern(template), operations };
  });

  const anywhereStatuses = new Set(options.anywhereStatuses ?? [413]);
  const unvalidatedPaths = new Set(options.unvalidatedPaths ?? []);

  // Routing is strict (`/v1/orders/` is not `/v1/orders`), and a path whose segments do not
  // percent-decode names nothing: both are paths the document does not have.
  const findPath = (path: string): DocumentedPath | undefined => (decodes(path) ? paths.find((candidate) => candidate.pattern.test(path)) : undefined);

  const fail = (response: ResponseToValidate, message: string): never => {
    throw new Error(
      `Response does not match the OpenAPI document: ${response.method.toUpperCase()} ${response.path} → ${response.status}: ${message}\n  content-type: ${
        response.contentType ?? headerValue(response.headers, 'content-type') ?? '(none)'
      }\n  body: ${snippet(response)}`,
    );
  };

  /** x-request-id: always there, always a UUID. */
  const checkRequestId = (response: ResponseToValidate): string => {
    const requestId = headerValue(response.headers, 'x-request-id');
    if (requestId === undefined) return fail(response, 'the x-request-id header is missing');
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(requestId)) return fail(response, `x-request-id "${requestId}" is not a UUID`);
    return requestId;
  };

  const isHead = (response: ResponseToValidate): boolean => response.method.toUpperCase() === 'HEAD';

  const checkNoBody = (response: ResponseToValidate): void => {
    if (response.body !== undefined || (response.text !== undefined && response.text !== '')) fail(response, 'a HEAD answer must have no body');
  };

  /** The problem document invariants the schema cannot express. */
  const checkProblemDocument = (response: ResponseToValidate): void => {
    const mediaType = mediaTypeOf(response.contentType ?? headerValue(response.headers, 'content-type'));
    if (mediaType !== problemContentType) fail(response, `an error answer must be ${problemContentType}, got ${mediaType ?? '(no content type)'}`);
    const requestId = checkRequestId(response);
    if (isHead(response)) {
      checkNoBody(response);
      return;
    }
    if (!checkProblem(response.body)) fail(response, `the body is not a Problem: ${describeErrors(checkProblem.errors)}`);
    const problem = response.body as { type: string; status: number; instance: string; code: string; requestId: string };
    if (problem.status !== response.status) fail(response, `problem status ${problem.status} differs from the HTTP status`);
    if (problem.requestId !== requestId) fail(response, `problem requestId "${problem.requestId}" differs from x-request-id "${requestId}"`);
    if (problem.instance !== pathOnly(response.path)) fail(response, `problem instance "${problem.instance}" is not the request path "${pathOnly(response.path)}"`);
    const expectedType = options.errorTypeBase === undefined ? undefined : `${options.errorTypeBase}/${problem.code}`;
    if (expectedType !== undefined && problem.type !== expectedType) fail(response, `problem type "${problem.type}" is not "${expectedType}"`);
    if (expectedType === undefined && !problem.type.endsWith(`/${problem.code}`)) fail(response, `problem type "${problem.type}" does not end with "/${problem.code}"`);
  };

  const checkUndocumented = (response: ResponseToValidate, documentedPath: DocumentedPath | undefined): void => {
    const allowed = documentedPath === undefined ? [404, ...anywhereStatuses] : [405, ...anywhereStatuses];
    const what = documentedPath === undefined ? 'a path the document does not have' : `a method ${documentedPath.template} does not have`;
    if (!allowed.includes(response.status)) fail(response, `${what} must answer ${allowed.join(' or ')} with a problem document`);
    if (response.status === 405 && documentedPath !== undefined) {
      const allow = headerValue(response.headers, 'allow');
      if (allow === undefined) fail(response, '405 without an Allow header');
      const listed = (allow ?? '').split(',').map((method) => method.trim().toUpperCase());
      const documented = [...documentedPath.operations.keys()];
      const expected = [...documented, ...(documented.includes('GET') && !documented.includes('HEAD') ? ['HEAD'] : [])];
      if ([...expected].sort().join(',') !== [...listed].sort().join(',')) fail(response, `Allow "${allow}" is not the documented methods ${expected.join(', ')}`);
    }
    checkProblemDocument(response);
  };

  const checkHeaders = (response: ResponseToValidate, operation: DocumentedOperation, documented: DocumentedResponse): void => {
    for (const { name, required, check } of documented.headers.values()) {
      const value = headerValue(response.headers, name);
      if (value === undefined) {
        if (required) fail(response, `the documented header ${name} of ${operation.label} ${documented.key} is missing`);
        continue;
      }
      const numeric = /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;
      const accepted = check(value) || (numeric !== undefined && check(numeric));
      if (!accepted) fail(response, `header ${name}: "${value}" does not match its schema: ${describeErrors(check.errors)}`);
    }
  };

  const validate = (response: ResponseToValidate): void => {
    const path = pathOnly(response.path);
    if (unvalidatedPaths.has(path)) return;
    const documentedPath = findPath(path);
    const method = response.method.toUpperCase();
    // HEAD is served by the GET operation, without a body.
    const operation = documentedPath?.operations.get(method) ?? (method === 'HEAD' ? documentedPath?.operations.get('GET') : undefined);
    if (documentedPath === undefined || operation === undefined) {
      checkUndocumented(response, documentedPath);
      return;
    }
    const status = String(response.status);
    const documented = operation.responses.get(status) ?? operation.responses.get(`${status[0] ?? ''}XX`) ?? operation.responses.get('default');
    if (documented === undefined) {
      if (anywhereStatuses.has(response.status)) {
        checkProblemDocument(response);
        return;
      }
      fail(response, `status ${status} is not documented for ${operation.label} (documented: ${[...operation.responses.keys()].join(', ')})`);
      return;
    }
    checkRequestId(response);
    checkHeaders(response, operation, documented);
    const mediaType = mediaTypeOf(response.contentType ?? headerValue(response.headers, 'content-type'));
    if (documented.content.size === 0) {
      if (response.body !== undefined || (response.text !== undefined && response.text !== '')) fail(response, `${operation.label} ${documented.key} documents no body`);
      return;
    }
    const checkBody = mediaType === undefined ? undefined : documented.content.get(mediaType);
    if (checkBody === undefined) fail(response, `content type ${mediaType ?? '(none)'} is not documented for ${operation.label} ${documented.key} (documented: ${[...documented.content.keys()].join(', ')})`);
    if (mediaType === problemContentType || response.status >= 400) {
      checkProblemDocument(response);
    }
    if (isHead(response)) {
      checkNoBody(response);
      return;
    }
    if (response.body === undefined) fail(response, 'the body is missing or not JSON');
    if (checkBody !== undefined && !checkBody(response.body)) fail(response, `the body does not match the schema of ${operation.label} ${documented.key} ${mediaType ?? ''}: ${describeErrors(checkBody.errors)}`);
  };

  const validateProblemOnly = (response: ResponseToValidate): void => {
    if (unvalidatedPaths.has(pathOnly(response.path))) return;
    const mediaType = mediaTypeOf(response.contentType ?? headerValue(response.headers, 'content-type'));
    if (response.status >= 400 || mediaType === problemContentType) checkProblemDocument(response);
  };

  return { validate, validateProblemOnly };
}
