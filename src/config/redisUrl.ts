/** A host and port of a Sentinel. */
export type RedisAddress = { readonly host: string; readonly port: number };

/**
 * Where Redis is: one server (`redis://`, `rediss://`, handed to ioredis as written), or a master
 * that Sentinels name (`redis+sentinel://`), which follows a failover on its own.
 */
export type RedisTarget =
  | { readonly mode: 'standalone'; readonly url: string }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisAddress[];
      readonly masterName: string;
      readonly db: number;
      /** Credentials of the master and its replicas (the URL's user information). */
      readonly username?: string;
      readonly password?: string;
      /** Credentials of the Sentinels themselves (query `sentinelUsername`, `sentinelPassword`), when they ask for any. */
      readonly sentinelUsername?: string;
      readonly sentinelPassword?: string;
    };

export const defaultSentinelPort = 26379;

export const redisUrlForms = 'redis://[:password@]host:6379[/db] or redis+sentinel://[:password@]sentinel1:26379,sentinel2:26379/masterName[/db]';

const sentinelScheme = 'redis+sentinel:';
const sentinelQueryNames = ['sentinelUsername', 'sentinelPassword'] as const;
const sentinelUrlPattern = /^redis\+sentinel:\/\/(?:([^@/?#]*)@)?([^/?#]*)(?:\/([^/?#]*))?(?:\/([^/?#]*))?\/?(?:\?([^#]*))?$/;

/** Reads REDIS_URL; throws an Error whose message says what is wrong and shows the accepted forms. */
export function parseRedisUrl(value: string): RedisTarget {
  const text = value.trim();
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(text)?.[0].toLowerCase();
  if (scheme === 'redis:' || scheme === 'rediss:') {
    if (!URL.canParse(text) || new URL(text).hostname === '') throw new Error(`must be a URL with a host (${redisUrlForms})`);
    return { mode: 'standalone', url: text };
  }
  if (scheme === 'rediss+sentinel:') throw new Error(`TLS through Sentinel is not supported; use ${redisUrlForms}`);
  if (scheme !== sentinelScheme) throw new Error(`must start with redis://, rediss:// or redis+sentinel:// (${redisUrlForms})`);
  return parseSentinelUrl(text);
}

function parseSentinelUrl(text: string): RedisTarget {
  const match = sentinelUrlPattern.exec(text);
  if (match === null) throw new Error(`must be redis+sentinel://[:password@]sentinel1:26379,sentinel2:26379/masterName[/db]`);
  const [, userInfo, hostList = '', rawName = '', rawDb, query] = match;
  const sentinels = hostList.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '').map(sentinelAddress);
  if (sentinels.length === 0) throw new Error('must name at least one Sentinel (redis+sentinel://sentinel1:26379,sentinel2:26379/masterName)');
  const masterName = decoded(rawName, 'the master name');
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(masterName)) {
    throw new Error('must end with the master name the Sentinels monitor (redis+sentinel://sentinel1:26379/mymaster): letters, digits, dots, dashes or underscores');
  }
  if (rawDb !== undefined && rawDb !== '' && !/^\d{1,5}$/.test(rawDb)) throw new Error(`the database after the master name must be a whole number, not "${rawDb}"`);
  const params = new URLSearchParams(query ?? '');
  const unknown = [...params.keys()].find((name) => !(sentinelQueryNames as readonly string[]).includes(name));
  if (unknown !== undefined) throw new Error(`unknown query parameter "${unknown}"; only ${sentinelQueryNames.join(' and ')} are read`);
  const [username, password] = credentials(userInfo);
  const sentinelUsername = params.get('sentinelUsername') ?? undefined;
  const sentinelPassword = params.get('sentinelPassword') ?? undefined;
  return {
    mode: 'sentinel',
    sentinels,
    masterName,
    db: rawDb === undefined || rawDb === '' ? 0 : Number(rawDb),
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    ...(sentinelUsername === undefined || sentinelUsername === '' ? {} : { sentinelUsername }),
    ...(sentinelPassword === undefined || sentinelPassword === '' ? {} : { sentinelPassword }),
  };
}

function sentinelAddress(entry: string): RedisAddress {
  // [::1]:26379, host:26379, host
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(entry);
  const host = match?.[1] ?? match?.[2];
  const port = match?.[3] === undefined ? defaultSentinelPort : Number(match[3]);
  if (host === undefined || port < 1 || port > 65535) throw new Error(`"${entry}" is not a Sentinel address (host:port)`);
  return { host, port };
}

function credentials(userInfo: string | undefined): [string | undefined, string | undefined] {
  if (userInfo === undefined || userInfo === '') return [undefined, undefined];
  const colon = userInfo.indexOf(':');
  const user = decoded(colon === -1 ? userInfo : userInfo.slice(0, colon), 'the user name');
  const password = colon === -1 ? undefined : decoded(userInfo.slice(colon + 1), 'the password');
  return [user === '' ? undefined : user, password === '' ? undefined : password];
}

function decoded(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new Error(`${what} is not correctly percent-encoded`);
  }
}

/** REDIS_URL for logs and messages: passwords (in the user information or the query) replaced by ***. */
export function redactedRedisUrl(value: string): string {
  return value
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:)[^@/?#]*@/i, '$1***@')
    .replace(/([?&][^=&#]*(?:pass|secret|token|key)[^=&#]*=)[^&#]*/gi, '$1***');
}
