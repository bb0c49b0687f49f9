import { expect } from 'vitest';
import type { TenantSummary } from '../../src/console/seedSummary.js';
import { eventually } from './eventually.js';

type Outcome = { readonly startedAt: number; readonly status: number; readonly rateLimitHeaders: boolean };

/** What the revocation-under-load test needs of a bed. */
export type RevocationBed = {
  readonly baseUrl: string;
  issueKey(tenant: TenantSummary, scopes: readonly string[]): Promise<string>;
  revokeKey(key: string): Promise<void>;
};

export async function getWithKey(baseUrl: string, path: string, key: string): Promise<Omit<Outcome, 'startedAt'>> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return { status: response.status, rateLimitHeaders: response.headers.has('x-ratelimit-remaining') };
}

/**
 * Clients hammer the hot operations with a key; the key is revoked while they are in full swing
 * (it is in the principal cache by then): no request started after the revocation committed may
 * be answered 200. Returns how long the revocation took to commit (ms).
 */
export async function expectRevocationActsUnderLoad(bed: RevocationBed, tenant: TenantSummary, clients = 8): Promise<number> {
  const key = await bed.issueKey(tenant, ['orders:read', 'inventory:read']);
  const paths = ['/v1/orders?limit=5', `/v1/orders/${encodeURIComponent(tenant.orderIds[0] ?? 'none')}`, '/v1/inventory/balances?limit=5'];
  const outcomes: Outcome[] = [];
  let revokedAt = Number.POSITIVE_INFINITY;
  const startedAfterRevocation = () => outcomes.filter((o) => o.startedAt > revokedAt).length;
  const client = async (offset: number): Promise<void> => {
    for (let i = offset; startedAfterRevocation() < 50; i += 1) {
      const startedAt = performance.now();
      const outcome = await getWithKey(bed.baseUrl, paths[i % paths.length] ?? '/v1/orders', key);
      outcomes.push({ startedAt, ...outcome });
    }
  };
  const running = Array.from({ length: clients }, (_, index) => client(index));
  // Given the load under way: 50 reads answered 200 before the revocation.
  await eventually(() => expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThanOrEqual(50), { intervalMs: 5, timeoutMs: 60_000 });
  const revoking = performance.now();
  await bed.revokeKey(key);
  // revokeKey resolves once its UPDATE has committed.
  revokedAt = performance.now();
  await Promise.all(running);

  const before = outcomes.filter((o) => o.startedAt < revokedAt);
  const after = outcomes.filter((o) => o.startedAt > revokedAt);
  expect(before.filter((o) => o.status === 200).length).toBeGreaterThanOrEqual(50);
  expect(after.length).toBeGreaterThanOrEqual(50);
  expect(after.filter((o) => o.status !== 401)).toEqual([]);
  // A refused request spends no budget and says nothing about it.
  expect(after.filter((o) => o.rateLimitHeaders)).toEqual([]);
  // Requests in flight at the moment of the commit may have read before it: 200 or 401, nothing else.
  expect(outcomes.filter((o) => o.status !== 200 && o.status !== 401)).toEqual([]);
  return revokedAt - revoking;
}
