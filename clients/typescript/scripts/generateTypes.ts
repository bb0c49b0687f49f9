import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { buildOpenApiDocument } from '../../../src/api/openapi/openApiDocument.js';
import { v1Operations } from '../../../src/api/v1/operations.js';

/** Where the committed types live; a test compares them with the types of the served document. */
export const schemaFile = fileURLToPath(new URL('../src/schema.ts', import.meta.url));

/** Request bodies: their enums stay closed (the service refuses any other value). */
const requestSchemas = new Set(['ExportRequest']);

/**
 * The TypeScript types of an OpenAPI document, as committed in `src/schema.ts`: the shapes a
 * client needs and nothing else, so that type-checking a program that uses them takes a moment.
 * Left out: descriptions and examples (the OpenAPI document and the README hold them), response
 * headers, and every answer but the successful one (a failure is a ProblemError). Enums of
 * response shapes are open (`"draft" | … | string`): new values are additive changes
 * within /v1, and a tolerant client has a default branch.
 */
export async function generateTypes(document: object): Promise<string> {
  const ast = await openapiTS(slim(document) as OpenAPI3, {
    transform: (schema, options) => {
      const values = schema.enum;
      const path = options.path ?? '';
      const inComponent = /^#\/components\/schemas\/([^/]+)/.exec(path);
      if (inComponent === null || requestSchemas.has(inComponent[1] ?? '') || values === undefined || values.length < 2) return undefined;
      if (!values.every((value): value is string => typeof value === 'string')) return undefined;
      // Plain `string` after the known values: `string & {}`, which would keep them for autocompletion,
      // is an object type to openapi-fetch's Readable<T>, which maps it to one.
      const open = ts.factory.createKeywordTypeNode(ts.SyntaxKind.StringKeyword);
      return ts.factory.createUnionTypeNode([...values.map((value) => ts.factory.createLiteralTypeNode(ts.factory.createStringLiteral(value))), open]);
    },
  });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}

/** The document without what the types do not need (see generateTypes). */
function slim(document: object): object {
  const copy = structuredClone(document) as { paths?: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
  for (const operations of Object.values(copy.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      if (typeof operation !== 'object' || operation === null || operation.responses === undefined) continue;
      operation.responses = Object.fromEntries(Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status)));
    }
  }
  return withoutDocumentation(copy) as object;
}

function withoutDocumentation(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDocumentation);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([name, inner]) => !(name === 'description' && typeof inner === 'string') && name !== 'example' && name !== 'examples' && name !== 'headers' && !name.startsWith('x-'))
      .map(([name, inner]) => [name, withoutDocumentation(inner)]),
  );
}

// Run directly: regenerates src/schema.ts from the document the service serves (`GET /openapi.json`).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const document = buildOpenApiDocument(v1Operations, { serverUrl: 'http://localhost:8080', errorTypeBase: 'https://problems.dental-supply.example/v1' });
  await writeFile(schemaFile, await generateTypes(document));
  process.stderr.write(`wrote ${schemaFile}\n`);
}
