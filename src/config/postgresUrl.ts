/** A host and port of a PostgreSQL server. */
export type PostgresAddress = { readonly host: string; readonly port: number };

/**
 * A PostgreSQL connection URL in libpq's forms: one server (`postgres://user@host:5432/db`) or
 * several (`postgres://user@pg1:5432,pg2:5432,pg3:5432/db`), of which the service uses whichever
 * its purpose calls for (the primary for writes, the standbys for reads). `urls` holds one
 * single-server URL per host, with the same user information, database and parameters: what the
 * driver (node-postgres, which has no multi-host form of its own) is given.
 */
export type PostgresTarget = { readonly hosts: readonly PostgresAddress[]; readonly urls: readonly string[] };

export const defaultPostgresPort = 5432;

export const postgresUrlForms = 'postgres://user@host:5432/db or postgres://user@pg1:5432,pg2:5432,pg3:5432/db';

const urlPattern = /^(postgres(?:ql)?:)\/\/([^/?#]*)([/?#].*)?$/i;

/** One `host[:port]` of a host list; IPv6 addresses in brackets. */
function parseAddress(text: string): PostgresAddress {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(text.trim());
  const port = match?.[2] === undefined ? defaultPostgresPort : Number(match[2]);
  if (!match?.[1] || port < 1 || port > 65535) throw new Error(`"${text.trim()}" is not a host[:port] (${postgresUrlForms})`);
  return { host: match[1].startsWith('[') ? match[1].slice(1, -1) : match[1], port };
}

/** Reads a connection URL; throws an Error whose message says what is wrong (never the password) and shows the accepted forms. */
export function parsePostgresUrl(value: string): PostgresTarget {
  const text = value.trim();
  const match = urlPattern.exec(text);
  if (!match?.[1]) throw new Error(`must start with postgres:// or postgresql:// (${postgresUrlForms})`);
  const [, scheme, authority = '', rest = ''] = match;
  const at = authority.lastIndexOf('@');
  const userInfo = at < 0 ? '' : authority.slice(0, at + 1);
  const hostList = at < 0 ? authority : authority.slice(at + 1);
  if (!hostList.includes(',')) {
    if (!URL.canParse(text)) throw new Error(`must be a URL (${postgresUrlForms})`);
    const url = new URL(text);
    // No host: libpq's default (a local socket, or the `host` parameter); handed on as written.
    return { hosts: [{ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? defaultPostgresPort : Number(url.port) }], urls: [text] };
  }
  const hosts = hostList.split(',').map(parseAddress);
  const urls = hosts.map(({ host, port }) => {
    const url = `${scheme}//${userInfo}${host.includes(':') ? `[${host}]` : host}:${port}${rest}`;
    if (!URL.canParse(url)) throw new Error(`must be a URL with a host (${postgresUrlForms})`);
    return url;
  });
  return { hosts, urls: [...new Set(urls)] };
}

/**
 * READ_DATABASE_URL: one or more URLs separated by commas, each of one server or of several
 * (libpq's multi-host form); every server named is one standby (or candidate standby).
 */
export function parseReadDatabaseUrls(value: string): readonly string[] {
  const entries = value
    .replace(/[\s,]+$/, '')
    .split(/,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error(`must name at least one server (${postgresUrlForms})`);
  return [...new Set(entries.flatMap((entry) => parsePostgresUrl(entry).urls))];
}
