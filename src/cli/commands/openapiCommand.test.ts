import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../../../test/support/cli.js';
import { buildOpenApiDocument } from '../../api/openapi/openApiDocument.js';
import { v1Operations } from '../../api/v1/operations.js';

describe('supply-api openapi', () => {
  test('prints the document of /v1 as one JSON document, without a database', async () => {
    const result = await runCli(['openapi'], { PUBLIC_BASE_URL: 'https://api.example.com', ERROR_TYPE_BASE: 'https://errors.example.com/v1' });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed: unknown = JSON.parse(result.stdout);
    expect(printed).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(v1Operations, { serverUrl: 'https://api.example.com', errorTypeBase: 'https://errors.example.com/v1' }))));
    expect(printed).toMatchObject({ openapi: '3.1.0', servers: [{ url: 'https://api.example.com' }] });
  });

  test('without PUBLIC_BASE_URL the server is the local default', async () => {
    const result = await runCli(['openapi']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ servers: [{ url: 'http://localhost:8080' }] });
  });

  test('--out FILE writes the same document to the file, nothing to stdout', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'supply-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      const result = await runCli(['openapi', '--out', file]);
      expect(result).toMatchObject({ code: 0, stdout: '' });
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(JSON.parse((await runCli(['openapi'])).stdout));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('takes no other option', async () => {
    const result = await runCli(['openapi', '--pretty']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^supply-api: .*usage: supply-api openapi/);
    expect(result.stdout).toBe('');
  });
});
