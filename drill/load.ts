import { setTimeout as sleep } from 'node:timers/promises';

export type Sample = { readonly startedAt: number; readonly endedAt: number; readonly status: number; readonly code?: string };

/** Longest a drill client waits for one answer; a request still running then counts as hung. */
export const clientTimeoutMs = 60_000;

/**
 * `clients` loops, each sending its next request as soon as the last answered, spread over
 * `bases`, until `stop` is aborted. Times are `performance.now()` milliseconds.
 */
export async function runLoad(options: {
  bases: readonly string[];
  path: string;
  key: string;
  clients: number;
  stop: AbortSignal;
}): Promise<Sample[]> {
  const samples: Sample[] = [];
  const client = async (index: number): Promise<void> => {
    let turn = index;
    while (!options.stop.aborted) {
      const base = options.bases[turn % options.bases.length] ?? '';
      turn += 1;
      samples.push(await request(`${base}${options.path}`, options.key));
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, index) => client(index)));
  return samples;
}

export async function request(url: string, key: string, init: RequestInit = {}): Promise<Sample> {
  const startedAt = performance.now();
  try {
    const response = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers }, signal: AbortSignal.timeout(clientTimeoutMs) });
    const text = await response.text();
    const code = response.headers.get('content-type')?.startsWith('application/problem+json') ? problemCode(text) : undefined;
    return { startedAt, endedAt: performance.now(), status: response.status, ...(code === undefined ? {} : { code }) };
  } catch {
    // 0: no HTTP answer at all (reset, refused, or the client gave up).
    await sleep(10);
    return { startedAt, endedAt: performance.now(), status: 0 };
  }
}

function problemCode(text: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'code' in parsed && typeof parsed.code === 'string') return parsed.code;
  } catch {
    return undefined;
  }
  return undefined;
}
