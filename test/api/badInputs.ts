import fc from 'fast-check';
import { expect } from 'vitest';
import { problemCatalogue } from '../../src/api/problems/problemCatalogue.js';
import type { Operation } from '../../src/api/v1/operation.js';
import { v1Operations } from '../../src/api/v1/operations.js';
import { asHeaderValue, type RawRequest, type RawResponse } from './rawHttp.js';

/** The inputs and answer checks of the bad-input properties (badInput.int.test.ts). */

export type Page = { data: Record<string, unknown>[]; hasMore: boolean; nextCursor?: string };
export type Problem = { type: string; title: string; status: number; detail: string; instance: string; code: string; requestId: string };

export const problemFields = ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type'];
export const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const maxBodyBytes = 16 * 1024;

/** A copy of `value` that fast-check shows as `label` in a counterexample (instead of a whole zod schema). */
export function shown<T extends object>(value: T, label: string): T {
  return Object.defineProperty({ ...value }, fc.toStringMethod, { value: () => label, enumerable: false });
}

export const queryTargets = v1Operations.flatMap((operation) =>
  Object.keys(operation.query?.shape ?? {}).map((parameter) => shown({ operation, parameter }, `${operation.path}?${parameter}`)),
);
/** Operations with an id in their path (`{metric}` is a documented key, not an id). */
export const idOperations = v1Operations.filter((operation) => /\{\w+Id\}/.test(operation.path)).map((operation) => shown(operation, operation.path));
/** Lists that are not paginated ignore `limit` and `cursor` (spec, operation rule 2). */
export const unpaginatedLists = v1Operations
  .filter((operation) => operation.method === 'get' && operation.params === undefined && operation.query === undefined && operation.responseName.endsWith('List'))
  .map((operation) => shown(operation, operation.path));

export function the<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

/** The `enum` of a query parameter in the served document (e.g. the status values of a list). */
export function enumsOf(document: unknown): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const paths = (document as { paths?: Record<string, { get?: { parameters?: { name?: string; in?: string; schema?: { enum?: unknown } }[] } }> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const parameter of item.get?.parameters ?? []) {
      const values = parameter.schema?.enum;
      if (parameter.in === 'query' && Array.isArray(values)) found.set(`${path}?${parameter.name ?? ''}`, values.map(String));
    }
  }
  return found;
}

export function pathWith(operation: Operation, encodedId: string): string {
  return operation.path.replace(/\{\w+\}/, encodedId);
}

export function notFoundCodeOf(operation: Operation): string {
  return the(
    operation.problems.find((code) => problemCatalogue[code].status === 404),
    `404 code of ${operation.operationId}`,
  );
}

export function expectWellFormed(request: RawRequest, response: RawResponse): void {
  const context = `${request.method ?? 'GET'} ${request.path} → ${response.status} ${response.text.slice(0, 300)}`;
  const contentType = response.headers['content-type'] ?? '';
  expect(response.status < 300 || (response.status >= 400 && response.status < 500), context).toBe(true);
  expect(response.headers['x-request-id'], context).toMatch(uuid);
  if (response.status < 300) {
    expect(contentType, context).toMatch(/^application\/json(;|$)/);
    expect(response.body, context).toBeTypeOf('object');
    return;
  }
  expect(contentType, context).toMatch(/^application\/problem\+json(;|$)/);
  const problem = response.body as Problem;
  expect(Object.keys(problem).sort(), context).toEqual(problemFields);
  expect(problem.status, context).toBe(response.status);
  expect(problem.requestId, context).toBe(response.headers['x-request-id']);
}

export function codeOf(response: RawResponse): string | undefined {
  return response.status >= 400 ? (response.body as Problem).code : undefined;
}

// ---- arbitraries -------------------------------------------------------------------------------

/** Text of every kind: unicode graphemes, any code point, Latin-1 with control characters, long runs, edge values. */
export const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 500, maxLength: 2400 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 100, maxLength: 500 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', ' ', '.', '..', '%', '%25', '/', '\\', '?', '#', '&', '=', '+', '0', '-1', 'null', 'undefined', '[]', '{}', '__proto__', '\u200b', '\ufeff', '\ud83d\ude00', 'a\u0301'),
  },
);

/** Text that reaches the database as an id. U+0000 there is a known 500 (see the end of the file). */
export const idText = anyText;

/** Percent-encoding garbage, sent raw: truncated, overlong and surrogate sequences, stray `%`. */
export function percentGarbage(extra: readonly string[]) {
  const token = fc.oneof(
    fc.constantFrom('%', '%%', '%E0%A4%A', '%E0%A4', '%A', '%ZZ', '%G1', '%C0%AF', '%ED%A0%80', '%F0%9F%98', '%FF', '%80', '%2F', '%25', '%2e%2e', '%u0041', '%0', '%20', '%7F'),
    fc.constantFrom(...'0123456789abcdefABCDEFxyz-._~!$\'()*,;:@'.split(''), ...extra),
  );
  return fc.array(token, { minLength: 1, maxLength: 12 }).map((tokens) => tokens.join(''));
}
export const queryGarbage = percentGarbage(['+', '=', '/', '?']);
export const pathGarbage = percentGarbage([]);

export const limitText = fc.oneof(
  fc.integer({ min: -5, max: 260 }).map(String),
  fc.constantFrom('01', '007', '200', '201', '1e2', '0x10', ' 5', '5 ', '+5', '5.0', '٣', '１', '0000000001'),
  anyText,
);

/** Header text: any generated text as the Latin-1 bytes of its UTF-8 encoding, minus what HTTP forbids; up to a few KB. */
export const headerText = anyText.map(asHeaderValue);
