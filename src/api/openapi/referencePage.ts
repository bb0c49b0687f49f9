import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from 'express';

/**
 * `GET /docs`: the OpenAPI document of `GET /openapi.json` rendered by Scalar's API reference (its
 * standalone browser bundle, served from node_modules by this service: no CDN, works offline).
 * Its "Test Request" client sends requests to this service with the key typed into its
 * authentication field; the key stays in the page (not persisted).
 */
export function referencePage(): Router {
  const router = Router({ strict: true });
  // Read once, on the first request for it (4 MB that most API processes never serve).
  let bundle: Buffer | undefined;
  router.get('/docs', (_request, response) => {
    response.set('Content-Security-Policy', contentSecurityPolicy);
    response.type('html').send(page);
  });
  router.get('/docs/assets/scalar.js', (_request, response) => {
    bundle ??= readFileSync(scalarBundlePath());
    response.set('Cache-Control', 'public, max-age=3600');
    response.type('text/javascript').send(bundle);
  });
  router.get('/docs/assets/init.js', (_request, response) => {
    response.set('Cache-Control', 'public, max-age=3600');
    response.type('text/javascript').send(init);
  });
  return router;
}

/** The package's standalone bundle (its `browser` entry), found next to its main entry. */
function scalarBundlePath(): string {
  const main = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return path.join(path.dirname(main), 'browser', 'standalone.js');
}

// Only this origin: the page, its scripts, the document and the requests the page tries.
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
].join('; ');

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dental Supply Read API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="app"></div>
<script src="/docs/assets/scalar.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

// Everything that would reach another host is off: web fonts, telemetry, the hosted client, the AI agent.
const configuration = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  persistAuth: false,
  defaultOpenAllTags: true,
  authentication: { preferredSecurityScheme: 'apiKey' },
};

const init = `Scalar.createApiReference('#app', ${JSON.stringify(configuration)});\n`;
