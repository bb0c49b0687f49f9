import express, { type Express } from 'express';
import type { DatabasePool } from 'slonik';
import { healthRoutes } from './healthRoutes.js';

export type AppDependencies = { pool: DatabasePool };

export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(healthRoutes(deps));
  return app;
}
