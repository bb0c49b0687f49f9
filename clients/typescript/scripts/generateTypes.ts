import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { buildOpenApiDocument } from '../../../src/api/openapi/openApiDocument.js';
import { v1Operations } from '../../../src/api/v1/operations.js';

/** Where the committed types live; a test compares them with the types of the served document. */
export const schemaFile = fileURLToPath(new URL('../src/schema.ts', import.meta.url));

/** The TypeScript types of an OpenAPI document, as committed in `src/schema.ts`. */
export async function generateTypes(document: object): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3);
  return `${COMMENT_HEADER}${astToString(ast)}`;
}

// Run directly: regenerates src/schema.ts from the document the service serves (`GET /openapi.json`).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const document = buildOpenApiDocument(v1Operations, { serverUrl: 'http://localhost:8080', errorTypeBase: 'https://problems.dental-supply.example/v1' });
  await writeFile(schemaFile, await generateTypes(document));
  process.stderr.write(`wrote ${schemaFile}\n`);
}
