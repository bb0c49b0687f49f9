import type { AddressInfo } from 'node:net';
import express, { Router } from 'express';
import { Registry } from 'prom-client';
import { describe, expect, test } from 'vitest';
import { createHttpMetrics } from './httpMetrics.js';
import { createRequestBudget } from './rateLimit/requestBudget.js';
import { requestState, stateOf } from './requestState.js';
import { createLogger } from '../platform/logger.js';

async function served(app: express.Express, paths: readonly string[]): Promise<void> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    for (const path of paths) await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`)).arrayBuffer();
  } finally {
    server.close();
  }
}

describe('HTTP metrics', () => {
  test('given requests to routes, then they are counted by route template (never the raw path), method and status, with their latency', async () => {
    const registry = new Registry();
    const metrics = createHttpMetrics(registry);
    const app = express();
    app.use(requestState, metrics.middleware);
    const mounted = Router();
    mounted.get('/things/:thingId', (_request, response) => void response.status(200).end());
    app.use('/api', mounted);
    app.get('/healthz', (_request, response) => void response.json({ status: 'ok' }));
    app.get('/v1/orders/:orderId', (_request, response, next) => {
      // /v1 operations name their template: their errors are answered after the router is left.
      stateOf(response).route = '/v1/orders/{orderId}';
      next(new Error('gone'));
    });
    app.use((_request, response) => void response.status(404).end());
    app.use((_error: unknown, _request: express.Request, response: express.Response, _next: express.NextFunction) => void response.status(500).end());
    await served(app, ['/api/things/a1', '/api/things/b2', '/healthz', '/v1/orders/ord_1', '/v1/orders/ord_2', '/no/such/path/ord_3']);

    const requests = (await registry.getSingleMetric('supply_http_requests_total')?.get())?.values.map((v) => ({ ...v.labels, value: v.value }));
    expect(requests).toEqual(
      expect.arrayContaining([
        { route: '/api/things/{thingId}', method: 'GET', status: '200', value: 2 },
        { route: '/healthz', method: 'GET', status: '200', value: 1 },
        { route: '/v1/orders/{orderId}', method: 'GET', status: '500', value: 2 },
        { route: 'unmatched', method: 'GET', status: '404', value: 1 },
      ]),
    );
    expect(requests).toHaveLength(4);
    const text = await registry.metrics();
    expect(text).toContain('supply_http_request_duration_seconds_count{route="/api/things/{thingId}",method="GET"} 2');
    expect(text).not.toMatch(/ord_1|a1|b2/);
  });

  test('the metered budget counts 429s and refunds; tool calls are counted by tool and outcome', async () => {
    const registry = new Registry();
    const metrics = createHttpMetrics(registry);
    const budget = metrics.metered(await createRequestBudget({ pointsPerWindow: 1, windowSeconds: 60, logger: createLogger('silent') }));
    expect((await budget.consume('svc_test_AbC')).allowed).toBe(true);
    expect((await budget.consume('svc_test_AbC')).allowed).toBe(false);
    await budget.refund('svc_test_AbC');
    metrics.toolCall('listOrders', 'ok');
    metrics.toolCall('listOrders', 'error');
    metrics.toolCall('listOrders', 'ok');
    const text = await registry.metrics();
    expect(text).toContain('supply_request_budget_exhausted_total 1');
    expect(text).toContain('supply_request_budget_refunds_total 1');
    expect(text).toContain('supply_mcp_tool_calls_total{tool="listOrders",outcome="ok"} 2');
    expect(text).toContain('supply_mcp_tool_calls_total{tool="listOrders",outcome="error"} 1');
    await budget.close();
  });

  test('the metered budget spends what it is asked to: a cost of 5 takes 5 units', async () => {
    const metrics = createHttpMetrics(new Registry());
    const budget = metrics.metered(await createRequestBudget({ pointsPerWindow: 6, windowSeconds: 60, logger: createLogger('silent') }));
    expect(await budget.consume('svc_test_AbC', 5)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await budget.consume('svc_test_AbC', 2)).toMatchObject({ allowed: false, remaining: 0 });
    await budget.close();
  });
});
