import { IncomingMessage, ServerResponse, createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { messageClassesOf } from './expressMessages.js';

describe('request and response classes born with the app prototypes', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('given an app, when a request is served, then Express finds its prototypes already in place and its own methods still work', async () => {
    const app = express();
    app.set('query parser', 'simple');
    Object.defineProperty(app.request, 'fresh', { configurable: true, get: () => false });
    const seen: Record<string, unknown>[] = [];
    app.get('/echo', (request, response) => {
      seen.push({
        requestBornWithPrototype: request instanceof classes.IncomingMessage,
        responseBornWithPrototype: response instanceof classes.ServerResponse,
        requestPrototypeIsTheApps: Object.getPrototypeOf(request) === app.request,
        responsePrototypeIsTheApps: Object.getPrototypeOf(response) === app.response,
        isIncomingMessage: request instanceof IncomingMessage,
        isServerResponse: response instanceof ServerResponse,
        appOfRequest: request.app === app,
        appOfResponse: response.app === app,
        fresh: request.fresh,
        header: request.get('x-probe'),
        query: request.query,
      });
      response.status(201).json({ path: request.path });
    });
    const classes = messageClassesOf(app);
    expect(messageClassesOf(app)).toBe(classes);
    server = createServer({ ...classes }, app);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');

    const answer = await fetch(`http://127.0.0.1:${address.port}/echo?a=1`, { headers: { 'x-probe': 'yes' } });

    expect({ status: answer.status, type: answer.headers.get('content-type'), body: await answer.json() }).toEqual({
      status: 201,
      type: 'application/json; charset=utf-8',
      body: { path: '/echo' },
    });
    expect(seen).toEqual([
      {
        requestBornWithPrototype: true,
        responseBornWithPrototype: true,
        requestPrototypeIsTheApps: true,
        responsePrototypeIsTheApps: true,
        isIncomingMessage: true,
        isServerResponse: true,
        appOfRequest: true,
        appOfResponse: true,
        fresh: false,
        header: 'yes',
        query: { a: '1' },
      },
    ]);
  });
});
