import { Router, type Request } from 'express';
import { ApiError } from '../platform/errors.js';
import type { Clock } from '../platform/clock.js';
import type { DownloadSource } from './localBlobStore.js';

/**
 * `GET /downloads/<key>?expires=..&signature=..` (HEAD too), mounted at `/downloads` outside /v1:
 * the link itself is the credential, so no API key is asked for. Every failure (bad or expired
 * link, altered key, repeated parameter, file gone) is the same 404, so an answer tells nothing
 * about which files exist.
 */
export function downloadRoute(deps: { readonly store: DownloadSource; readonly clock: Clock }): Router {
  const router = Router({ caseSensitive: true });
  router.use((_request, response, next) => {
    // Also covers the 404s, which must not be cached either (a file may appear later).
    response.set('Cache-Control', 'no-store');
    next();
  });
  router.get('/*key', async (request, response) => {
    const key = keyOf(request.params);
    const url = request.originalUrl;
    const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    const expires = single(query, 'expires');
    const signature = single(query, 'signature');
    if (key === undefined || expires === undefined || signature === undefined || !deps.store.verify(key, expires, signature, deps.clock.now())) {
      throw new ApiError('common.not_found');
    }
    const bytes = await deps.store.read(key);
    if (bytes === undefined) throw new ApiError('common.not_found');
    const fileName = key.slice(key.lastIndexOf('/') + 1);
    response.set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Length': String(bytes.length),
      'Content-Disposition': `attachment; filename="${fileName}"`,
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    response.status(200).end(bytes);
  });
  return router;
}

/** Read from the raw query string, so that the app's query parser setting does not matter; repeated means absent. */
function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  return values.length === 1 ? values[0] : undefined;
}

/** The key from the wildcard's segments (Express 5 gives them decoded, as an array). */
function keyOf(params: Request['params']): string | undefined {
  const segments: unknown = (params as Record<string, unknown>).key;
  if (!Array.isArray(segments) || !segments.every((segment): segment is string => typeof segment === 'string')) return undefined;
  return segments.join('/');
}
