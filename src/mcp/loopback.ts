/** Host names of this machine's loopback interface, as `URL.hostname` writes them. */
export const loopbackHostnames: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

export function isLoopbackUrl(url: URL): boolean {
  return loopbackHostnames.includes(url.hostname);
}

/**
 * The loopback names a base is also served under. Not `[::1]`: the SDK refuses an `http` issuer
 * on any other host than these two.
 */
const aliasHostnames: readonly string[] = ['localhost', '127.0.0.1'];

function parsed(text: string): URL | undefined {
  return URL.canParse(text) ? new URL(text) : undefined;
}

/**
 * The base URL a request reached. For a base on `localhost` or `127.0.0.1`, a request whose Host
 * names the other one with the same port is served as that one, so that a client pointed at either
 * finds metadata naming the URL it used; any other request is served as the base itself.
 */
export function requestBase(base: string, host: string | undefined): string {
  const canonical = new URL(base);
  if (host === undefined || !aliasHostnames.includes(canonical.hostname)) return base;
  const requested = parsed(`${canonical.protocol}//${host}`);
  if (requested === undefined || !aliasHostnames.includes(requested.hostname) || requested.port !== canonical.port) return base;
  return requested.origin;
}

/** Resource indicators compare as URLs without a fragment or one trailing slash. */
function comparable(value: string): string {
  return (value.split('#', 1)[0] ?? value).replace(/\/$/, '');
}

/**
 * Whether two resource indicators name the same resource: equal, a fragment and one trailing slash
 * aside, or the same scheme, port and path on two loopback aliases.
 */
export function sameResource(a: string, b: string): boolean {
  if (comparable(a) === comparable(b)) return true;
  const first = parsed(comparable(a));
  const second = parsed(comparable(b));
  if (first === undefined || second === undefined || !isLoopbackUrl(first) || !isLoopbackUrl(second)) return false;
  return first.protocol === second.protocol && first.port === second.port && first.pathname === second.pathname && first.search === second.search;
}

/**
 * Whether a browser page of this origin may call /mcp: the base's own origin, or for a loopback
 * base one of its aliases on the same port. `null` (sandboxed pages, files) never is.
 */
export function isAllowedOrigin(origin: string, base: string): boolean {
  const page = parsed(origin);
  if (page === undefined || page.origin === 'null') return false;
  const own = new URL(base);
  if (page.origin === own.origin) return true;
  return isLoopbackUrl(own) && isLoopbackUrl(page) && page.protocol === own.protocol && page.port === own.port;
}
