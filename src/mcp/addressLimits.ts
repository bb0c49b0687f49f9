import type { Request, RequestHandler } from 'express';
import { TooManyRequestsError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { Limit, Limits } from '../api/rateLimit/requestBudget.js';

/**
 * Per client address (request.ip, so behind TRUST_PROXY the address the proxy names): requests to
 * each OAuth endpoint, and failed bearer tokens on /mcp. Counted in Redis when REDIS_URL is set,
 * so they hold across processes; in each process's memory otherwise.
 */
export const addressLimitDefaults = {
  register: { points: 20, windowSeconds: 60 * 60 },
  authorize: { points: 100, windowSeconds: 15 * 60 },
  token: { points: 50, windowSeconds: 15 * 60 },
  revoke: { points: 50, windowSeconds: 15 * 60 },
  failedBearer: { points: 30, windowSeconds: 5 * 60 },
} as const;

export type AddressLimitName = keyof typeof addressLimitDefaults;
export type AddressLimitSettings = Readonly<Record<AddressLimitName, { readonly points: number; readonly windowSeconds: number }>>;
export type AddressLimits = Readonly<Record<AddressLimitName, Limit>>;

export const defaultAddressLimitPrefix = 'supply-api:assistant';

export function createAddressLimits(limits: Limits, settings: AddressLimitSettings = addressLimitDefaults, keyPrefix = defaultAddressLimitPrefix): AddressLimits {
  const one = (name: AddressLimitName) => limits.limit({ ...settings[name], keyPrefix: `${keyPrefix}:${name}` });
  return { register: one('register'), authorize: one('authorize'), token: one('token'), revoke: one('revoke'), failedBearer: one('failedBearer') };
}

export function clientAddress(request: Request): string {
  return request.ip ?? request.socket.remoteAddress ?? 'unknown';
}

/**
 * 429 `too_many_requests` (OAuth's error form) with Retry-After once the address used its limit.
 * CORS preflights (OPTIONS) are not counted.
 */
export function limitPerAddress(limit: Limit, what: string): RequestHandler {
  return async (request, response, next) => {
    if (request.method === 'OPTIONS') {
      next();
      return;
    }
    const decision = await limit.consume(clientAddress(request));
    if (decision.allowed) {
      next();
      return;
    }
    response
      .status(429)
      .set({ 'Retry-After': String(decision.retryAfterSeconds ?? decision.resetSeconds), 'Cache-Control': 'no-store' })
      .json(new TooManyRequestsError(`Too many ${what} from this address; retry in ${decision.retryAfterSeconds ?? decision.resetSeconds} seconds`).toResponseObject());
  };
}

/** Most addresses a process remembers as blocked at once (an attack from many addresses cannot grow it without end). */
const maxRemembered = 10_000;

/**
 * Failed bearer tokens per address: each failure is counted in the shared limit; once an address
 * is over it, this process remembers it until the window ends and refuses its bearer requests
 * without looking anything up (no database, no Redis).
 */
export function failedAttemptGuard(limit: Limit, now: () => number = Date.now): { blockedFor(address: string): number | undefined; fail(address: string): Promise<void> } {
  const blockedUntil = new Map<string, number>();
  return {
    blockedFor(address) {
      const until = blockedUntil.get(address);
      if (until === undefined) return undefined;
      const left = until - now();
      if (left > 0) return Math.ceil(left / 1000);
      blockedUntil.delete(address);
      return undefined;
    },
    async fail(address) {
      const decision = await limit.consume(address);
      if (decision.allowed) return;
      if (blockedUntil.size >= maxRemembered) {
        const at = now();
        for (const [known, until] of blockedUntil) if (until <= at) blockedUntil.delete(known);
        if (blockedUntil.size >= maxRemembered) blockedUntil.clear();
      }
      blockedUntil.set(address, now() + (decision.retryAfterSeconds ?? decision.resetSeconds) * 1000);
    },
  };
}
