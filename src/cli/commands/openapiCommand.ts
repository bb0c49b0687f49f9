import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildOpenApiDocument } from '../../api/openapi/openApiDocument.js';
import { v1Operations } from '../../api/v1/operations.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { optionalString, parseCommandOptions } from '../options.js';
import { jsonText, printJson } from '../output.js';

/**
 * Prints the OpenAPI document of /v1 (the one `GET /openapi.json` serves), or writes it to
 * `--out FILE` (whole or not at all); needs no database.
 */
export const openapiCommand: Command = async ({ args, config }) => {
  const { values } = parseCommandOptions(args, ['openapi'], commandSpec('openapi'));
  const document = buildOpenApiDocument(v1Operations, { serverUrl: config.publicBaseUrl ?? 'http://localhost:8080', errorTypeBase: config.errorTypeBase });
  const out = optionalString(values.out);
  if (out === undefined) {
    printJson(document);
    return 0;
  }
  const file = path.resolve(out);
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, jsonText(document));
  await rename(temporary, file);
  process.stderr.write(`wrote ${path.relative(process.cwd(), file) || file}\n`);
  return 0;
};
