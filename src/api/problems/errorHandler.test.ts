import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, test } from 'vitest';
import { createLogger } from '../../platform/logger.js';
import { requestState } from '../requestState.js';
import { errorHandler } from './errorHandler.js';
import { invalidRequestDetails, problemCatalogue } from './problemCatalogue.js';

/** Every detail a problem document may carry, in every language (with its placeholders). */
const catalogueTexts = [...Object.values(problemCatalogue).flatMap((p) => Object.values(p.detail)), ...Object.values(invalidRequestDetails).flatMap((d) => Object.values(d))];
const fromCatalogue = (detail: string) => catalogueTexts.some((text) => new RegExp(`^${text.replace(/[.*+?^$()[\]\\|]/g, '\\$&').replace(/\{\w+\}/g, '.*')}$`).test(detail));

describe('errors of the HTTP layer as problem documents', () => {
  test.each([
    ['request.size.invalid', 400, 'request size did not match content length', 400, 'common.invalid_request'],
    ['request.aborted', 400, 'request aborted', 400, 'common.invalid_request'],
    ['encoding.unsupported', 415, 'unsupported content encoding "br"', 400, 'common.invalid_request'],
    ['charset.unsupported', 415, 'unsupported charset "KOI8-R"', 400, 'common.invalid_request'],
    ['entity.parse.failed', 400, 'Unexpected token } in JSON at position 1', 400, 'common.invalid_request'],
    ['entity.too.large', 413, 'request entity too large', 413, 'common.payload_too_large'],
    ['parameters.too.many', 413, 'too many parameters', 413, 'common.payload_too_large'],
    ['stream.not.readable', 500, 'stream is not readable', 500, 'common.internal_error'],
  ])('given Express reports %s, then the answer is a problem document with its own status and code and catalogue text only, never the message of Express', async (type, status, message, expectedStatus, code) => {
    const app = express();
    app.use(requestState);
    app.get('/boom', () => {
      throw Object.assign(new Error(message), { type, status, statusCode: status, expose: status < 500 });
    });
    app.use(errorHandler('https://problems.example/v1', createLogger('silent')));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/boom`, { headers: { 'accept-language': 'es' } });
      const body = (await response.json()) as Record<string, unknown>;
      expect({ status: response.status, code: body.code }).toEqual({ status: expectedStatus, code });
      expect(fromCatalogue(String(body.detail)), String(body.detail)).toBe(true);
      expect(JSON.stringify(body)).not.toContain(message);
    } finally {
      server.close();
    }
  });
});
