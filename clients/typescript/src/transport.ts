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
};

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
  return async (request) => {
    for (let attempt = 0; ; attempt += 1) {
      const response = await send(request.clone());
      if (response.status !== 429 || attempt >= maxRetries) return response;
      const waitSeconds = integerHeader(response, 'retry-after') ?? 1;
      if (waitSeconds > maxWaitSeconds) return response;
      await response.body?.cancel();
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
