import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Server } from 'node:http';
import { loadConfig } from '../config/config.js';
import { createLogger } from '../platform/logger.js';
import { createApp } from './createApp.js';
import { listen } from './listen.js';

const errorTypeBase = 'https://problems.example/v1';
const junk = (count: number) => Array.from({ length: count }, (_, i) => `j${i}=1`).join('&');

describe('the app outside /v1', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = await listen(createApp({ readiness: async () => ({ ready: true, checks: {} }), logger: createLogger('silent'), errorTypeBase }), { port: 0, host: '127.0.0.1', errorTypeBase });
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  test('a query string of more than 1000 parameters (empty ones count, as the parser counts them) is a 400 problem, not a request with parameters lost', async () => {
    const refused = await fetch(`${base}/healthz?${junk(1000)}&x=1`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'common.invalid_request', instance: '/healthz', detail: 'The query string has more than 1000 parameters; none of them was read.' });
    expect((await fetch(`${base}/healthz?${'&'.repeat(1000)}`)).status).toBe(400);
    expect((await fetch(`${base}/healthz?${junk(1000)}`)).status).toBe(200);
  });

  test('trusts the proxies TRUST_PROXY names, and none without it', () => {
    const logger = createLogger('silent');
    const readiness = async () => ({ ready: true, checks: {} });
    expect(createApp({ readiness, logger, errorTypeBase }).get('trust proxy')).toBe(false);
    expect(createApp({ readiness, logger, errorTypeBase, trustProxy: loadConfig({ TRUST_PROXY: '10.0.0.0/8,loopback' }).trustProxy }).get('trust proxy')).toEqual(['10.0.0.0/8', 'loopback']);
  });
});
