import { Router } from 'express';
import type { Registry } from 'prom-client';
import type { StandbyState } from '../platform/readReplicas.js';

export type Readiness = {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, string>>;
  /** With READ_DATABASE_URL: each hot standby, its replay lag and whether it serves reads (it never makes the process unready: the primary serves). */
  readonly standbys?: readonly StandbyState[];
};

export type HealthDependencies = {
  /** What /readyz reports: the database answers and the projections are caught up. */
  readonly readiness: () => Promise<Readiness>;
  /** Served at /metrics in the Prometheus text format. */
  readonly metrics?: Registry;
};

/** Outside /v1 and without a key: liveness, readiness and metrics. */
export function healthRoutes(deps: HealthDependencies): Router {
  const router = Router({ caseSensitive: true });
  router.get('/healthz', (_request, response) => {
    response.json({ status: 'ok' });
  });
  router.get('/readyz', async (_request, response) => {
    const readiness = await deps.readiness().catch((): Readiness => ({ ready: false, checks: { database: 'unreachable' } }));
    response.status(readiness.ready ? 200 : 503).json({
      status: readiness.ready ? 'ready' : 'unavailable',
      checks: readiness.checks,
      ...(readiness.standbys === undefined ? {} : { standbys: readiness.standbys }),
    });
  });
  const registry = deps.metrics;
  if (registry) {
    router.get('/metrics', async (_request, response) => {
      response.type(registry.contentType).send(await registry.metrics());
    });
  }
  return router;
}
