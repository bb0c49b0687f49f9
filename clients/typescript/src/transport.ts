/** The request budget as the last answer reported it (rate-limit headers). */
export type Budget = {
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window resets, counted from `observedAt`. */
  readonly resetSeconds: number;
  /** `RateLimit-Policy`, e.g. `120;w=60`. */
  readonly policy: string | undefined;
  readonly observedAt: Date;
};

export type RetryOptions = {
  /** Retries after a 429 before its ProblemError is thrown (default 3; 0 never retries). */
  readonly maxRetries?: number;
  /** A `Retry-After` longer than this is not waited for: the 429 is thrown at once (default 120). */
  readonly maxWaitSeconds?: number;
  /** Called before each wait after a 429 (to log it, or count it): the request, the wait and which retry comes next. */
  readonly onRetry?: (retry: RetryInfo) => void;
};

/** A 429 the client is about to wait out (RetryOptions.onRetry). */
export type RetryInfo = {
  readonly method: string;
  readonly url: string;
  /** Seconds it waits (the answer's `Retry-After`). */
  readonly waitSeconds: number;
  /** 1 for the first retry of this request. */
  readonly attempt: number;
  /** The budget the 429 reported. */
  readonly budget: Budget | undefined;
};

/**
 * The request never got an answer: the service could not be reached (DNS, refused or reset
 * connection, TLS, a proxy that hung up). Nothing is known about whether it was served; reads are
 * safe to send again. `cause` is the error of fetch.
 */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly code = 'client.network_error';
  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(`${method} ${url}: the service could not be reached (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
  }
}

/**
 * `send`, with a failure to get any answer thrown as NetworkError (an abort stays the signal's
 * reason). A GET or HEAD whose connection was closed under it (a kept-alive connection the server
 * had just closed: reset, or closed before any answer) is sent once more first, as browsers do:
 * it was not served.
 */
export function reachingFetch(send: FetchFunction): FetchFunction {
  return async (request) => {
    const resendable = request.method === 'GET' || request.method === 'HEAD';
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await send(resendable ? request.clone() : request);
      } catch (error) {
        if (request.signal.aborted || error instanceof NetworkError) throw error;
        if (resendable && attempt === 0 && isClosedConnection(error)) continue;
        throw new NetworkError(request.method, request.url, error);
      }
    }
  };
}

/** Node's fetch failing because the connection was reset or closed (its `cause` names it). */
function isClosedConnection(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

export type FetchFunction = (input: Request) => Promise<Response>;

/** Reads the rate-limit headers of an answer; undefined when it has none (401, 403). */
export function budgetOf(response: Response, now: Date): Budget | undefined {
  const limit = integerHeader(response, 'x-ratelimit-limit');
  const remaining = integerHeader(response, 'x-ratelimit-remaining');
  const resetSeconds = integerHeader(response, 'x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || resetSeconds === undefined) return undefined;
  return { limit, remaining, resetSeconds, policy: response.headers.get('ratelimit-policy') ?? undefined, observedAt: now };
}

/**
 * Sends a request; on 429 waits `Retry-After` seconds and sends it again, at most `maxRetries`
 * times. A 429 means the request was not served, so repeating it (the export POST too) is safe.
 */
export function retryingFetch(send: FetchFunction, options: RetryOptions = {}, sleep: (ms: number, signal?: AbortSignal) => Promise<void> = delay): FetchFunction {
  const maxRetries = options.maxRetries ?? 3;
  const maxWaitSeconds = options.maxWaitSeconds ?? 120;
  const reaching = reachingFetch(send);
  return async (request) => {
    for (let attempt = 0; ; attempt += 1) {
      const response = await reaching(request.clone());
      if (response.status !== 429 || attempt >= maxRetries) return response;
      const waitSeconds = integerHeader(response, 'retry-after') ?? 1;
      if (waitSeconds > maxWaitSeconds) return response;
      await response.body?.cancel();
      options.onRetry?.({ method: request.method, url: request.url, waitSeconds, attempt: attempt + 1, budget: budgetOf(response, new Date()) });
      await sleep(waitSeconds * 1000, request.signal);
    }
  };
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function integerHeader(response: Response, name: string): number | undefined {
  const value = response.headers.get(name);
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
}
