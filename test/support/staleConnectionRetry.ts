/**
 * fetch, sent once more when it fails on a connection the server had already closed. Node's fetch
 * keeps connections alive and closes an idle one shortly before the server's 5 s keep-alive ends;
 * on a loaded machine its timer can fire late, and a request written on the closed socket fails with
 * ECONNRESET (or "other side closed") before the server saw it. Browsers retry such a request; the
 * tests do too, for GET and HEAD only (sending another kind twice could do it twice).
 */
export async function fetchRetryingStaleConnection(input: string | URL, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (error) {
    const method = (init.method ?? 'GET').toUpperCase();
    if ((method !== 'GET' && method !== 'HEAD') || !isClosedConnection(error)) throw error;
    return fetch(input, init);
  }
}

function isClosedConnection(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return cause !== undefined && (cause.code === 'ECONNRESET' || cause.code === 'UND_ERR_SOCKET' || cause.code === 'EPIPE');
}
