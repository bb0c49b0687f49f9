import { buildOpenApiDocument } from '../../api/openapi/openApiDocument.js';
import { v1Operations } from '../../api/v1/operations.js';
import type { Command } from '../command.js';
import { parseOptions } from '../options.js';
import { printJson } from '../output.js';

/** Prints the OpenAPI document of /v1 (the one `GET /openapi.json` serves); needs no database. */
export const openapiCommand: Command = async ({ args, config }) => {
  parseOptions(args, {}, 'supply-api openapi');
  printJson(buildOpenApiDocument(v1Operations, { serverUrl: config.publicBaseUrl ?? 'http://localhost:8080', errorTypeBase: config.errorTypeBase }));
  return 0;
};
