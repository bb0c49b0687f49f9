import type { RequestHandler } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { RequestBudget } from './rateLimit/requestBudget.js';
import { stateOf } from './requestState.js';

/**
 * HTTP metrics of every role: requests by route template (never the raw path: ids would make a
 * series each), method and status, and their latency. The children of each label set are looked up
 * once and kept, so a request costs two increments and a clock read beyond the bare counters.
 */
export type HttpMetrics = {
  readonly middleware: RequestHandler;
  /** The request budget with its 429s and refunds counted (one budget serves /v1 and /mcp). */
  metered(budget: RequestBudget): RequestBudget;
  /** One assistant tool call and how it ended. */
  toolCall(tool: string, outcome: 'ok' | 'error'): void;
};

export const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function createHttpMetrics(registry: Registry): HttpMetrics {
  const requests = new Counter({
    name: 'supply_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'supply_http_request_duration_seconds',
    help: 'Time from a request\'s arrival to the end of its answer, by route template and method',
    labelNames: ['route', 'method'],
    buckets: latencyBuckets,
    registers: [registry],
  });
  const exhausted = new Counter({
    name: 'supply_request_budget_exhausted_total',
    help: 'Requests and tool calls refused with 429 because their key or sign-in had used its budget',
    registers: [registry],
  });
  const refunds = new Counter({
    name: 'supply_request_budget_refunds_total',
    help: 'Budget units given back after a request had spent one: refused with 401 (a key revoked or suspended since it was cached), or served again on the primary after failing on a standby',
    registers: [registry],
  });
  const toolCalls = new Counter({
    name: 'supply_mcp_tool_calls_total',
    help: 'Assistant (/mcp) tool calls, by tool and outcome (error: the result is a problem document)',
    labelNames: ['tool', 'outcome'],
    registers: [registry],
  });

  type Children = { readonly count: Counter.Internal; readonly time: Histogram.Internal<'route' | 'method'> };
  const children = new Map<string, Children>();
  const childrenOf = (route: string, method: string, status: number): Children => {
    const key = `${method} ${status} ${route}`;
    let found = children.get(key);
    if (found === undefined) {
      found = { count: requests.labels(route, method, String(status)), time: duration.labels(route, method) };
      children.set(key, found);
    }
    return found;
  };

  const middleware: RequestHandler = (request, response, next) => {
    const started = performance.now();
    response.once('finish', () => {
      const method = knownMethods.has(request.method) ? request.method : 'other';
      const { count, time } = childrenOf(stateOf(response).route ?? routeTemplateOf(request), method, response.statusCode);
      count.inc();
      time.observe((performance.now() - started) / 1000);
    });
    next();
  };

  return {
    middleware,
    metered: (budget) => ({
      ...budget,
      // Every argument is passed on, the cost included: an /mcp batch spends one unit per message.
      consume: async (...args) => {
        const decision = await budget.consume(...args);
        if (!decision.allowed) exhausted.inc();
        return decision;
      },
      refund: async (...args) => {
        await budget.refund(...args);
        refunds.inc();
      },
    }),
    toolCall: (tool, outcome) => toolCalls.inc({ tool, outcome }),
  };
}

/**
 * The template of the route that answered, in the OpenAPI document's notation (`/healthz`,
 * `/authorize`); `unmatched` when no route did (unknown paths, whatever they were). Routes whose
 * errors are answered after their router has been left (when Express no longer knows where it
 * was mounted) name themselves in the request state instead (/v1 operations, downloads).
 */
export function routeTemplateOf(request: { readonly baseUrl: string; readonly route?: { readonly path?: unknown } }): string {
  const path = request.route?.path;
  if (typeof path !== 'string') return 'unmatched';
  return `${request.baseUrl}${path}`.replace(/:(\w+)/g, '{$1}') || '/';
}
