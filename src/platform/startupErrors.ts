/**
 * Start-up failures that name what to change: the setting behind a connection that failed, the
 * port that is taken. Their message is the whole story, printed as one line by the command line.
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** A URL as it may be shown: its password (and a query's credentials) replaced by `***`. */
export function redactedUrl(url: string): string {
  // libpq's multi-host form (postgres://u:p@pg1:5432,pg2:5432/db) is no WHATWG URL: its password is hidden by hand, and the rest through its first host's URL.
  const multiHost = /^(postgres(?:ql)?:\/\/)(?:([^@/?#:]*)(?::[^@/?#]*)?@)?([^/?#@]*,[^/?#@]*)(.*)$/i.exec(url);
  if (multiHost) {
    const [, scheme = '', user, hosts = '', rest = ''] = multiHost;
    const tail = redactedUrl(`${scheme}x${rest}`).replace(/^[a-z]+:\/\/x/i, '');
    return `${scheme}${user === undefined ? '' : `${user}${url.includes(`${user}:`) ? ':***' : ''}@`}${hosts}${tail}`;
  }
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const name of [...parsed.searchParams.keys()]) {
      if (/pass|secret|token|key/i.test(name)) parsed.searchParams.set(name, '***');
    }
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

/** The message of an error and of the causes and aggregated errors behind it, on one line. */
export function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reasonOf(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause === undefined || error.cause === error ? '' : reasonOf(error.cause);
  const own = error.message.replace(/\s*\n\s*/g, ' ').trim();
  return cause === '' || own.includes(cause) ? own : `${own} (${cause})`;
}

/**
 * Runs the first contact with a component configured by `setting`; a failure becomes a
 * StartupError naming the setting, what it points at (without a password) and why.
 */
export async function namingSetting<T>(setting: string, what: string, url: string, contact: () => Promise<T>): Promise<T> {
  try {
    return await contact();
  } catch (error) {
    throw new StartupError(`cannot use ${what} at ${setting}=${redactedUrl(url)}: ${reasonOf(error)}`, { cause: error });
  }
}
