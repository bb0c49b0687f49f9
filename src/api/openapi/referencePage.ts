import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from 'express';

/**
 * `GET /docs`: the OpenAPI document of `GET /openapi.json` rendered by Swagger UI (the
 * `swagger-ui-dist` bundle, served from node_modules by this service: no CDN, works offline). Its
 * "Authorize" dialog takes the key and "Try it out" sends requests to this service with it; the
 * key stays in the page (not persisted).
 *
 * Swagger UI rather than Scalar's reference: Scalar's current packages want Node 22 (two dozen
 * engine warnings on install under Node 20), weigh about 180 MB installed against 12 MB, and
 * each release brings buttons that lead to its hosted services. Nothing on this page leaves
 * the origin: no topbar (its logo links out), no validator badge (it loads from another host),
 * no document URL taken from the page's query string.
 */
export function referencePage(): Router {
  const router = Router({ strict: true, caseSensitive: true });
  // Read once, on the first request for each (about 2 MB that most API processes never serve).
  const assets = new Map<string, Buffer>();
  const asset = (file: string): Buffer => {
    let bytes = assets.get(file);
    if (bytes === undefined) {
      bytes = readFileSync(path.join(swaggerUiDirectory(), file));
      assets.set(file, bytes);
    }
    return bytes;
  };
  router.get('/docs', (_request, response) => {
    response.set('Content-Security-Policy', contentSecurityPolicy);
    response.type('html').send(page);
  });
  router.get('/docs/assets/swagger-ui-bundle.js', (_request, response) => {
    response.set('Cache-Control', 'public, max-age=3600');
    response.type('text/javascript').send(asset('swagger-ui-bundle.js'));
  });
  router.get('/docs/assets/swagger-ui.css', (_request, response) => {
    response.set('Cache-Control', 'public, max-age=3600');
    response.type('text/css').send(asset('swagger-ui.css'));
  });
  router.get('/docs/assets/init.js', (_request, response) => {
    response.set('Cache-Control', 'public, max-age=3600');
    response.type('text/javascript').send(init);
  });
  return router;
}

/** The folder of the swagger-ui-dist package (it has no `exports`, so its package.json resolves). */
function swaggerUiDirectory(): string {
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

// Only this origin: the page, its scripts and styles, the document and the requests the page tries.
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dental Supply Read API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="app"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

// BaseLayout: no topbar. validatorUrl null: no badge fetched from the validator service.
// queryConfigEnabled false: the page never loads a document named in its own URL.
const configuration = {
  url: '/openapi.json',
  dom_id: '#app',
  layout: 'BaseLayout',
  deepLinking: true,
  validatorUrl: null,
  queryConfigEnabled: false,
  persistAuthorization: false,
  displayRequestDuration: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
};

const init = `window.ui = SwaggerUIBundle(${JSON.stringify(configuration)});\n`;
