import { Router } from 'express';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { sql } from '../platform/sql.js';

/** Outside /v1 and without a key: liveness (the process answers) and readiness (the database answers). */
export function healthRoutes(deps: { pool: DatabasePool }): Router {
  const router = Router();
  router.get('/healthz', (_request, response) => {
    response.json({ status: 'ok' });
  });
  router.get('/readyz', async (_request, response) => {
    try {
      await deps.pool.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`);
      response.json({ status: 'ready', checks: { database: 'ok' } });
    } catch {
      response.status(503).json({ status: 'unavailable', checks: { database: 'unreachable' } });
    }
  });
  return router;
}
