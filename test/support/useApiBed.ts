import { afterAll, beforeAll, expect } from 'vitest';
import type { TenantSummary } from '../../src/console/seedSummary.js';
import { createApiTestBed, type ApiTestBed } from './apiTestBed.js';
import { startOwnCluster, type OwnCluster } from './ownCluster.js';

export type ApiBedOptions = NonNullable<Parameters<typeof createApiTestBed>[0]>;

export type ApiBedFixture = {
  /** The bed, once the file's beforeAll has booted it. */
  readonly bed: ApiTestBed;
  /** Its first tenant. */
  readonly tenant: TenantSummary;
  /** Its second tenant (the bed seeds two unless told otherwise). */
  readonly otherTenant: TenantSummary;
  /** A key of the first tenant holding `scopes` (only when scopes were given). */
  readonly key: string;
};

/**
 * Given: one API test bed for the file (booted in beforeAll, closed in afterAll), its first tenant
 * and, when `scopes` are given, a key of that tenant with them. Read the fields inside tests and
 * hooks, not at load. `bed` may be a function, called at boot: for options that need what an
 * earlier beforeAll of the file started (an S3 server, a proxy). `bootTimeoutMs` replaces the hook
 * timeout of vitest.config.ts for a slow boot. `ownCluster` (true) makes the bed's database in a
 * Postgres cluster of its own (ownCluster.ts), for files whose waits depend on the log's
 * cluster-wide horizon (change feeds, and settling after appends of other processes).
 */
export function useApiBed(
  options: { scopes?: readonly string[]; bed?: ApiBedOptions | (() => ApiBedOptions); bootTimeoutMs?: number; ownCluster?: boolean } = {},
): ApiBedFixture {
  let booted: { bed: ApiTestBed; tenant: TenantSummary; key?: string } | undefined;
  let cluster: OwnCluster | undefined;
  beforeAll(async () => {
    const bedOptions = typeof options.bed === 'function' ? options.bed() : options.bed;
    if (options.ownCluster === true) cluster = await startOwnCluster();
    const bed = await createApiTestBed(cluster === undefined ? bedOptions : { ...bedOptions, postgresAdminUrl: cluster.adminUrl });
    const tenant = bed.tenants[0];
    if (tenant === undefined) {
      await bed.close();
      throw new Error('the bed seeded no tenant');
    }
    booted = { bed, tenant, ...(options.scopes === undefined ? {} : { key: await bed.issueKey(tenant, options.scopes) }) };
  }, options.bootTimeoutMs);
  afterAll(async () => {
    await booted?.bed.close();
    await cluster?.close();
  });
  const current = () => {
    if (booted === undefined) throw new Error('the API bed is not booted: read it inside a test');
    return booted;
  };
  return {
    get bed() {
      return current().bed;
    },
    get tenant() {
      return current().tenant;
    },
    get otherTenant() {
      const other = current().bed.tenants[1];
      if (other === undefined) throw new Error('the bed seeded one tenant only');
      return other;
    },
    get key() {
      const { key } = current();
      if (key === undefined) throw new Error('useApiBed was given no scopes: it issued no key');
      return key;
    },
  };
}

export type Page<T = Record<string, unknown>> = { data: T[]; hasMore: boolean; nextCursor?: string };

export type ApiClient = ReturnType<typeof apiClient>;

/**
 * When: reads of /v1 with the fixture's key (or the one given), each answer checked to be a 200
 * JSON document. `given` is read at each call, so a client may be made at load.
 */
export function apiClient(given: { readonly bed: ApiTestBed; readonly key: string }) {
  const get = async <T = Record<string, unknown>>(path: string, options: { key?: string; headers?: Record<string, string> } = {}): Promise<T> => {
    const response = await given.bed.request(path, { key: options.key ?? given.key, ...(options.headers === undefined ? {} : { headers: options.headers }) });
    expect(response.status, `${path}: ${response.text}`).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return response.body as T;
  };
  const page = <T = Record<string, unknown>>(path: string, options: { key?: string; headers?: Record<string, string> } = {}): Promise<Page<T>> => get<Page<T>>(path, options);
  /** Every item of a list, page after page (at most 200 a page), following nextCursor. */
  const allPages = async <T = Record<string, unknown>>(path: string, options: { key?: string; headers?: Record<string, string> } = {}): Promise<T[]> => {
    const items: T[] = [];
    let cursor: string | undefined;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const current = await page<T>(`${path}${separator}limit=200${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, options);
      items.push(...current.data);
      cursor = current.nextCursor;
    } while (cursor !== undefined);
    return items;
  };
  return { get, page, allPages };
}
