import { describe, expect, test } from 'vitest';
import { responseMode } from './assistantRoutes.js';

describe('the answer a POST to /mcp gets, by its Accept header', () => {
  test.each([
    ['application/json, text/event-stream', 'json'],
    ['application/json', 'json'],
    ['text/event-stream', 'sse'],
    ['text/event-stream, application/json;q=0', 'sse'],
    ['*/*', 'json'],
    ['application/*', 'json'],
    ['text/*', 'sse'],
    ['TEXT/EVENT-STREAM', 'sse'],
    ['text/html', undefined],
    ['application/xml, text/plain', undefined],
    ['application/json;q=0, text/event-stream;q=0', undefined],
    ['', undefined],
    [undefined, undefined],
  ] as const)('Accept %j → %s', (accept, mode) => {
    expect(responseMode(accept)).toBe(mode);
  });
});
