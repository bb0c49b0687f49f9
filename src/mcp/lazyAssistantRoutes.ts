import { Router, type NextFunction, type Request, type Response } from 'express';
import type { AssistantDependencies } from './assistantRoutes.js';

/**
 * A path the assistant router may answer: `/mcp`, the OAuth endpoints (`/authorize`, `/token`,
 * `/register`, `/revoke`) and their `/.well-known/` metadata, below any base path.
 */
const assistantPath = /\/(?:mcp|authorize|token|register|revoke|\.well-known)(?:\/|$)/;

/**
 * The assistant routes (`assistantRoutes`), loaded on the first request for one of their paths:
 * the MCP SDK and what it brings (ajv, zod 4, zod-to-json-schema, hono) held about 20 MB of heap
 * and 50 MB of RSS in every API process, most of which never serves /mcp. Other paths pass
 * through untouched.
 */
export function lazyAssistantRoutes(deps: AssistantDependencies): Router {
  let loading: Promise<Router> | undefined;
  const load = (): Promise<Router> => {
    loading ??= import('./assistantRoutes.js').then(
      ({ assistantRoutes }) => assistantRoutes(deps),
      (error: unknown) => {
        // A failed load is tried again on the next request rather than remembered.
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };
  const gate = Router({ caseSensitive: true });
  gate.use((request: Request, response: Response, next: NextFunction) => {
    if (!assistantPath.test(request.path)) {
      next();
      return;
    }
    load().then((router) => router(request, response, next), next);
  });
  return gate;
}
