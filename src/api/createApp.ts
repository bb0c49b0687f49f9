import express, { type Express } from 'express';
import { healthRoutes, type HealthDependencies } from './healthRoutes.js';

export type AppDependencies = HealthDependencies;

export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(healthRoutes(deps));
  return app;
}
