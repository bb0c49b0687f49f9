import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import {
  ClientOptionsError,
  createClient,
  ExportError,
  knownProblemCodes,
  NetworkError,
  ProblemError,
  type OrderListItem,
  type RecordChange,
  type RetryInfo,
} from '@dental-supply/read-api-client';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { createApp } from '../../../src/api/createApp.js';
import { buildOpenApiDocument } from '../../../src/api/openapi/openApiDocument.js';
import { createCursorCodec } from '../../../src/api/pagination/cursorCodec.js';
import { createRequestBudget } from '../../../src/api/rateLimit/requestBudget.js';
import { v1Operations } from '../../../src/api/v1/operations.js';
import { loadConfig } from '../../../src/config/config.js';
import type { TenantSummary } from '../../../src/console/seedSummary.js';
import { failingPuts } from '../../../test/support/failingBlobStore.js';
import { createPrincipalCache } from '../../../src/keys/principalCache.js';
import { problemCodes } from '../../../src/platform/errors.js';
import { refusingPort } from '../../../test/support/redisProxy.js';
import { issuableScopes } from '../../../src/keys/scopes.js';
import { systemClock } from '../../../src/platform/clock.js';
import { slonikRowReader } from '../../../src/platform/projectionReader.js';
import { testErrorTypeBase, type ApiTestBed } from '../../../test/support/apiTestBed.js';
import { useApiBed } from '../../../test/support/useApiBed.js';
import { silentLogger } from '../../../test/support/databases.js';
import { pace } from '../../../test/support/pace.js';
import { generateTypes, schemaFile } from '../scripts/generateTypes.js';

let bed: ApiTestBed;
let tenant: TenantSummary;
let key: string;
const storage = failingPuts();

// The client's sync and watch read change feeds: a cluster of the file's own, so that no other file's transaction holds the log's horizon back.
const given = useApiBed({ ownCluster: true, scopes: issuableScopes, bed: { tenants: 1, wrapExportStore: storage.wrap } });
beforeAll(() => {
  ({ bed, tenant, key } = given);
});

type Sent = { method: string; url: URL; ifNoneMatch: string | null; authorization: string | null; status: number };

/** A fetch that records what the client sent and got, and how many requests were in flight at once. */
function recordingFetch(change?: (request: Request, response: Response) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fetchFn = async (request: Request): Promise<Response> => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const response = await fetch(request);
      sent.push({ method: request.method, url: new URL(request.url), ifNoneMatch: request.headers.get('if-none-match'), authorization: request.headers.get('authorization'), status: response.status });
      return change === undefined ? response : await change(request, response);
    } finally {
      inFlight -= 1;
    }
  };
  return { fetch: fetchFn, sent, maxInFlight: () => maxInFlight };
}

describe('the generated types', () => {
  test('the committed src/schema.ts is what openapi-typescript makes of the document the service serves', async () => {
    // The bed serves its own error type base (in problem examples); the committed types use the default one.
    const servedText = await (await fetch(`${bed.baseUrl}/openapi.json`)).text();
    const served = JSON.parse(servedText.replaceAll(testErrorTypeBase, loadConfig({}).errorTypeBase)) as object;
    const committed = await readFile(schemaFile, 'utf8');
    expect(await generateTypes(served), 'the client types are stale: run `npm run client:types` and commit src/schema.ts').toBe(committed);
  });
});

describe('requests, problems and the budget', () => {
  test('get returns the typed body; the budget headers of the latest answer are exposed', async () => {
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key });
    expect(client.budget).toBeUndefined();
    const me = await client.get('/v1/me');
    expect(me.workspaceId).toBe(tenant.workspaceId);
    const first = client.budget;
    expect(first?.limit).toBe(100_000);
    const { data } = await client.GET('/v1/orders/{orderId}', { params: { path: { orderId: tenant.orderIds[0] ?? '' } } });
    expect(data?.orderId).toBe(tenant.orderIds[0]);
    expect(client.budget?.remaining).toBe((first?.remaining ?? 0) - 1);
    expect(client.budget?.policy).toBe('100000;w=60');
  });

  test('a failure throws ProblemError with code, status, title, detail and the request id', async () => {
    const recorded = recordingFetch();
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: recorded.fetch });
    const failure = await client.get('/v1/orders/{orderId}', { params: { path: { orderId: 'no-such-order' } } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProblemError);
    expect(failure).toMatchObject({ code: 'orders.not_found', status: 404, title: 'Order not found', instance: '/v1/orders/no-such-order' });
    expect((failure as ProblemError).detail.length).toBeGreaterThan(0);
    expect((failure as ProblemError).requestId).toMatch(/^[0-9a-f-]{36}$/);

    const unknownKey = createClient({ baseUrl: bed.baseUrl, apiKey: 'svc_test_AAAAAAAAAAAAAAAAAAAAAAAA_0000' });
    await expect(unknownKey.get('/v1/me')).rejects.toMatchObject({ name: 'ProblemError', code: 'api_keys.invalid', status: 401 });
    const narrow = createClient({ baseUrl: bed.baseUrl, apiKey: await bed.issueKey(tenant, ['orders:read']) });
    await expect(narrow.paginate('/v1/fulfillments').next()).rejects.toMatchObject({ code: 'api_keys.scope_missing', status: 403 });
    await expect(client.get('/v1/orders', { params: { query: { limit: 500 } } })).rejects.toMatchObject({ code: 'common.invalid_request', status: 400 });
  });

  test('an answer that is not a problem document still throws ProblemError, with its status', async () => {
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: async () => new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }) });
    await expect(client.get('/v1/me')).rejects.toMatchObject({ code: 'client.unexpected_response', status: 502 });
  });
});

describe('sync', () => {
  test('a full sync gives every order once; a sync from its cursor gives exactly what changed since, and nothing when nothing changed', async () => {
    const recorded = recordingFetch();
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: recorded.fetch });
    const full = client.sync.orders({ limit: 9 });
    expect(full.cursor).toBeUndefined();
    const seen = new Map<string, OrderListItem>();
    for await (const order of full) seen.set(order.orderId, order);
    const listed: OrderListItem[] = [];
    for await (const order of client.paginate('/v1/orders')) listed.push(order);
    expect(new Set(seen.keys())).toEqual(new Set(listed.map((order) => order.orderId)));
    expect(full.requests).toBe(Math.ceil((listed.length + 1) / 9));
    const cursor = full.cursor;
    expect(typeof cursor).toBe('string');

    const idle = client.sync.orders({ cursor });
    for await (const order of idle) throw new Error(`nothing changed, yet ${order.orderId} came`);
    expect(idle.requests).toBe(1);
    expect(idle.cursor).toBe(cursor);

    const placed = await bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await bed.console.advanceOrder({ workspaceId: tenant.workspaceId, orderId: placed.orderId });
    await bed.settle();
    const changed = client.sync.orders({ cursor });
    const items: OrderListItem[] = [];
    for await (const order of changed) items.push(order);
    expect(items.map((order) => order.orderId)).toEqual([placed.orderId]);
    expect(changed.cursor).not.toBe(cursor);

    const balances = client.sync.balances({ limit: 200 });
    let boxes = 0;
    for await (const balance of balances) boxes += balance.available === balance.onHand - balance.reserved ? 1 : 0;
    expect(boxes).toBeGreaterThan(0);
    const fulfillments = client.sync.fulfillments();
    for await (const fulfillment of fulfillments) expect(fulfillment.orderId).toMatch(/\S/);
    expect(typeof fulfillments.cursor).toBe('string');
  });

  test('a loop left half way keeps the cursor before the page it was in, so nothing is lost', async () => {
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key });
    const sync = client.sync.orders({ limit: 5 });
    let taken = 0;
    for await (const order of sync) {
      expect(order.orderId).toMatch(/\S/);
      taken += 1;
      if (taken === 7) break;
    }
    const first: string[] = [];
    for await (const order of client.sync.orders({ limit: 5 })) first.push(order.orderId);
    const resumed: string[] = [];
    for await (const order of client.sync.orders({ cursor: sync.cursor, limit: 5 })) resumed.push(order.orderId);
    expect(resumed).toEqual(first.slice(5));
  });
});

describe('options and errors', () => {
  test('a baseUrl that ends with /v1 is refused with a clear message', () => {
    for (const baseUrl of [`${bed.baseUrl}/v1`, `${bed.baseUrl}/v1/`]) {
      expect(() => createClient({ baseUrl, apiKey: key })).toThrow(ClientOptionsError);
      expect(() => createClient({ baseUrl, apiKey: key })).toThrow(/ends with \/v1: give the service's address without it \(http:\/\/127\.0\.0\.1:\d+\)/);
    }
    expect(() => createClient({ baseUrl: 'api.example', apiKey: key })).toThrow(/not an absolute URL/);
    expect(() => createClient({ baseUrl: `${bed.baseUrl}/`, apiKey: key })).not.toThrow();
  });

  test('a service that cannot be reached throws NetworkError, not a bare TypeError', async () => {
    const port = await refusingPort();
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: key });
    const failure = await client.get('/v1/me').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(failure).toMatchObject({ name: 'NetworkError', code: 'client.network_error', method: 'GET', url: `http://127.0.0.1:${port}/v1/me` });
    expect((failure as NetworkError).cause).toBeInstanceOf(TypeError);
    const sync = client.sync.orders();
    await expect(sync[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(NetworkError);
  });

  test('the client knows every problem code of the service', () => {
    expect([...knownProblemCodes].sort()).toEqual([...problemCodes].sort());
  });
});

describe('paginate', () => {
  test('walks every page, sending the filters again with each cursor', async () => {
    const recorded = recordingFetch();
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: recorded.fetch });
    const all: OrderListItem[] = [];
    for await (const order of client.paginate('/v1/orders', { limit: 7 })) all.push(order);
    const reference = await client.get('/v1/orders', { params: { query: { limit: 200 } } });
    expect(reference.hasMore).toBe(false);
    expect(all.map((order) => order.orderId)).toEqual(reference.data.map((order) => order.orderId));
    expect(recorded.sent.length).toBeGreaterThan(2);

    recorded.sent.length = 0;
    const approved: OrderListItem[] = [];
    for await (const order of client.paginate('/v1/orders', { status: 'closed', limit: 3 })) approved.push(order);
    expect(approved.length).toBe(reference.data.filter((order) => order.status === 'closed').length);
    expect(approved.length).toBeGreaterThan(3);
    for (const request of recorded.sent) expect(request.url.searchParams.get('status')).toBe('closed');
    expect(recorded.sent.filter((request) => request.url.searchParams.has('cursor')).length).toBe(recorded.sent.length - 1);
  });

  test('a list without pages is one page; limit defaults to 200', async () => {
    const recorded = recordingFetch();
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: recorded.fetch });
    const clinics = [];
    for await (const clinic of client.paginate('/v1/clinics')) clinics.push(clinic.clinicId);
    expect(new Set(clinics)).toEqual(new Set(tenant.clinicIds));
    expect(recorded.sent.map((request) => request.url.searchParams.get('limit'))).toEqual(['200']);
  });
});

describe('429', () => {
  /** The bed's routes with a budget of 2 requests per 2-second window. */
  async function tightlyBudgetedServer() {
    const budget = await createRequestBudget({ pointsPerWindow: 2, windowSeconds: 2, logger: silentLogger });
    const service = bed.exports.service;
    if (service === undefined) throw new Error('the bed has no export service');
    const app = createApp({
      readiness: async () => ({ ready: true, checks: {} }),
      logger: silentLogger,
      errorTypeBase: testErrorTypeBase,
      api: {
        db: bed.database.pool,
        reads: slonikRowReader(bed.database.pool),
        principals: createPrincipalCache(),
        logger: silentLogger,
        budget,
        budgetWindowSeconds: 2,
        cursors: createCursorCodec('c'.repeat(32)),
        operations: v1Operations,
        openApi: buildOpenApiDocument(v1Operations, { serverUrl: 'http://127.0.0.1', errorTypeBase: testErrorTypeBase }),
        clock: systemClock,
        analyticsCaps: loadConfig({}).analyticsCaps,
        exports: service,
      },
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: async () => {
        server.close();
        server.closeAllConnections();
        await budget.close();
      },
    };
  }

  test('waits Retry-After and retries; gives up after maxRetries, or at once when the wait is longer than allowed', async () => {
    const server = await tightlyBudgetedServer();
    try {
      const recorded = recordingFetch();
      const retries: RetryInfo[] = [];
      const client = createClient({ baseUrl: server.baseUrl, apiKey: key, fetch: recorded.fetch, retry: { maxRetries: 3, onRetry: (retry) => retries.push(retry) } });
      for (let round = 0; round < 3; round += 1) expect((await client.get('/v1/me')).workspaceId).toBe(tenant.workspaceId);
      const statuses = recorded.sent.map((request) => request.status);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1);
      expect(retries).toHaveLength(statuses.filter((status) => status === 429).length);
      expect(retries[0]).toMatchObject({ method: 'GET', url: `${server.baseUrl}/v1/me`, attempt: 1, budget: { limit: 2, remaining: 0 } });
      expect(retries[0]?.waitSeconds).toBeGreaterThanOrEqual(1);
      expect(statuses.at(-1)).toBe(200);
      expect(client.budget?.policy).toBe('2;w=2');

      const impatient = createClient({ baseUrl: server.baseUrl, apiKey: key, retry: { maxRetries: 0 } });
      await impatient.get('/v1/me').catch(() => undefined);
      await impatient.get('/v1/me').catch(() => undefined);
      const refused = await impatient.get('/v1/me').catch((error: unknown) => error);
      expect(refused).toMatchObject({ name: 'ProblemError', code: 'common.too_many_requests', status: 429 });

      const counting = recordingFetch();
      const noLongWaits = createClient({ baseUrl: server.baseUrl, apiKey: key, fetch: counting.fetch, retry: { maxRetries: 5, maxWaitSeconds: 0 } });
      await expect(noLongWaits.get('/v1/me')).rejects.toMatchObject({ code: 'common.too_many_requests' });
      expect(counting.sent.length).toBe(1);
    } finally {
      await server.close();
    }
  });
});

describe('exports.build', () => {
  test('requests, polls until ready, downloads without the key, checks the checksum and returns the CSV bytes', async () => {
    storage.failNext(0);
    const recorded = recordingFetch();
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: recorded.fetch });
    const built = await client.exports.build({ period: 'weekly', language: 'es', pollIntervalMs: 200 });
    const { bytes } = built;
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    expect(text.startsWith('\uFEFFmetric,dimension,label,value,unit,evidenceId\r\n')).toBe(true);
    const poll = recorded.sent.filter((request) => request.url.pathname.startsWith('/v1/analytics/exports/')).at(-1);
    expect(poll).toBeDefined();
    const download = recorded.sent.at(-1);
    expect(download?.url.pathname.startsWith('/v1')).toBe(false);
    expect(download?.authorization).toBeNull();
    const exportId = poll?.url.pathname.split('/').at(-1) ?? '';
    const job = await client.get('/v1/analytics/exports/{exportId}', { params: { path: { exportId } } });
    expect(job.period).toBe('weekly');
    expect(job.checksum).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(built).toEqual({ bytes, exportId, checksum: job.checksum, byteSize: bytes.byteLength, asOf: job.asOf });
    expect(built.asOf).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test('a download whose bytes do not match the checksum is fetched again', async () => {
    storage.failNext(0);
    let corrupted = 0;
    const recorded = recordingFetch(async (request, response) => {
      if (new URL(request.url).pathname.startsWith('/v1') || corrupted > 0) return response;
      corrupted += 1;
      const bytes = new Uint8Array(await response.arrayBuffer());
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
      return new Response(bytes, { status: 200 });
    });
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: recorded.fetch });
    const { bytes } = await client.exports.build({ pollIntervalMs: 200 });
    expect(corrupted).toBe(1);
    expect(recorded.sent.filter((request) => !request.url.pathname.startsWith('/v1')).length).toBe(2);
    expect(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes.subarray(0, 10))).toBe('\uFEFFmetric,');
  });

  test('a build that failed once and was rebuilt by the service still gives the file', async () => {
    storage.failNext(1);
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key });
    const { bytes, byteSize } = await client.exports.build({ pollIntervalMs: 200, maxPollIntervalMs: 500 });
    expect(bytes.byteLength).toBeGreaterThan(50);
    expect(byteSize).toBe(bytes.byteLength);
  });

  test('a build that keeps failing throws ExportError failed with the job error', async () => {
    storage.failNext(10);
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key });
    const failure = await client.exports.build({ pollIntervalMs: 200, maxPollIntervalMs: 500, failedGraceMs: 4_000 }).catch((error: unknown) => error);
    storage.failNext(0);
    expect(failure).toBeInstanceOf(ExportError);
    expect(failure).toMatchObject({ reason: 'failed', jobError: 'processing_error' });
    expect((failure as ExportError).exportId).toMatch(/\S/);
  });
});

describe('watch', () => {
  test('orders: what exists once as existing, then each change once as changed, one request a poll while nothing changes; the cursor goes on after a restart', async () => {
    const recorded = recordingFetch();
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: recorded.fetch });
    const changes: RecordChange<OrderListItem>[] = [];
    const errors: unknown[] = [];
    const cursors: string[] = [];
    const watcher = client.watch.orders({
      intervalMs: 50,
      onError: (error) => errors.push(error),
      onCursor: (cursor) => void cursors.push(cursor),
      onChange: async (change) => {
        changes.push(change);
        // A slow handler: the next poll must wait for it.
        await pace(1);
      },
    });
    let saved: string | undefined;
    try {
      await vi.waitFor(() => expect(watcher.polls).toBeGreaterThanOrEqual(3), { timeout: 20_000 });
      const everything = await createClient({ baseUrl: bed.baseUrl, apiKey: key }).get('/v1/orders', { params: { query: { limit: 200 } } });
      const initial = changes.length;
      expect(changes.every((change) => change.kind === 'existing')).toBe(true);
      expect(new Set(changes.map((change) => change.record.orderId))).toEqual(new Set(everything.data.map((order) => order.orderId)));
      const feedRequests = recorded.sent.filter((request) => request.url.pathname === '/v1/orders/changes');
      const pagesOfFirstPoll = feedRequests.filter((request) => !request.url.searchParams.has('cursor')).length;
      // Every later poll, nothing having changed: one request.
      expect(feedRequests.length - pagesOfFirstPoll).toBe(watcher.polls - 1);
      expect(cursors).toHaveLength(1);

      const open = everything.data.find((order) => order.status === 'submitted' || order.status === 'approved' || order.status === 'allocated');
      if (open === undefined) throw new Error('the seed has no open order');
      await bed.console.advanceOrder({ workspaceId: tenant.workspaceId, orderId: open.orderId });
      const placed = await bed.console.placeOrder({ workspaceId: tenant.workspaceId });
      await bed.settle();
      const changedIds = () => new Set(changes.slice(initial).map((change) => change.record.orderId));
      await vi.waitFor(() => expect(changedIds()).toEqual(new Set([open.orderId, placed.orderId])), { timeout: 20_000 });
      const later = changes.slice(initial);
      // Each change once (the placed order's two events may come in one poll or two).
      expect(later.length).toBeLessThanOrEqual(3);
      expect(later.every((change) => change.kind === 'changed')).toBe(true);
      expect(later.filter((change) => change.record.orderId === open.orderId)).toHaveLength(1);
      expect(later.find((change) => change.record.orderId === open.orderId)?.record.version).toBeGreaterThan(open.version);
      expect(errors).toEqual([]);
      expect(recorded.maxInFlight()).toBe(1);
      await vi.waitFor(() => expect(cursors.length).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
      await watcher.poll();
      saved = watcher.cursor;
      expect(saved).toBe(cursors.at(-1));
    } finally {
      await watcher.stop();
    }
    // Stopped for good: a witness polling at the same interval polls three times meanwhile.
    const polls = watcher.polls;
    const witness = createClient({ baseUrl: bed.baseUrl, apiKey: key }).watch.orders({ intervalMs: 50, onChange: () => undefined });
    try {
      await vi.waitFor(() => expect(witness.polls).toBeGreaterThanOrEqual(3), { timeout: 20_000 });
    } finally {
      await witness.stop();
    }
    expect(watcher.polls).toBe(polls);

    // A new process with the saved cursor: only what changed meanwhile.
    const advanced = await bed.console.placeOrder({ workspaceId: tenant.workspaceId });
    await bed.settle();
    const resumed: RecordChange<OrderListItem>[] = [];
    const again = createClient({ baseUrl: bed.baseUrl, apiKey: key }).watch.orders({ intervalMs: 60_000, ...(saved === undefined ? {} : { cursor: saved }), onChange: (change) => void resumed.push(change) });
    try {
      await vi.waitFor(() => expect(again.polls).toBe(1), { timeout: 20_000 });
      expect(resumed.map((change) => [change.kind, change.record.orderId])).toEqual([['changed', advanced.orderId]]);
    } finally {
      await again.stop();
    }
  });

  test('fulfillments: a delivery that progresses is reported once as changed', async () => {
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key });
    const changes: RecordChange<{ orderId: string; status: string; updatedAt: string }>[] = [];
    const watcher = client.watch.fulfillments({ intervalMs: 60_000, reportExisting: false, onChange: (change) => void changes.push(change) });
    try {
      await vi.waitFor(() => expect(watcher.polls).toBe(1), { timeout: 20_000 });
      expect(changes).toEqual([]);
      const deliveries = await client.get('/v1/fulfillments', { params: { query: { limit: 200 } } });
      const moving = deliveries.data.find((delivery) => ['dispatched', 'in_transit', 'delivered'].includes(delivery.status));
      const orderId = moving?.orderId;
      if (orderId === undefined) throw new Error('the seed has no delivery under way');
      await bed.console.advanceOrder({ workspaceId: tenant.workspaceId, orderId });
      await bed.settle();
      await watcher.poll();
      await watcher.poll();
      expect(changes).toHaveLength(1);
      expect(changes[0]).toMatchObject({ kind: 'changed', record: { orderId } });
      expect(changes[0]?.record.status).not.toBe(moving?.status);
    } finally {
      await watcher.stop();
    }
  });

  test('reportExisting false: a first poll that failed is no poll; the next learns what exists and reports nothing, later ones report changes', async () => {
    // Each watcher's first request to its feed answers 503; the others reach the service.
    const failingFirst = (path: string) => {
      let failed = false;
      return recordingFetch((request, response) => {
        if (failed || new URL(request.url).pathname !== path) return response;
        failed = true;
        const problem = { type: `${testErrorTypeBase}/common.service_unavailable`, title: 'Unavailable', status: 503, detail: 'later', instance: path, code: 'common.service_unavailable', requestId: 'r' };
        return new Response(JSON.stringify(problem), { status: 503, headers: { 'content-type': 'application/problem+json' } });
      }).fetch;
    };
    const changes: unknown[] = [];
    const errors: unknown[] = [];
    const options = { intervalMs: 60_000, reportExisting: false, onError: (error: unknown) => errors.push(error), onChange: (change: unknown) => void changes.push(change) };
    const orders = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: failingFirst('/v1/orders/changes') }).watch.orders(options);
    const exceptions = createClient({ baseUrl: bed.baseUrl, apiKey: key, fetch: failingFirst('/v1/analytics/exceptions') }).watch.exceptions(options);
    try {
      await vi.waitFor(() => expect([orders.polls, exceptions.polls]).toEqual([1, 1]), { timeout: 20_000 });
      expect(errors).toEqual([expect.objectContaining({ code: 'common.service_unavailable' }), expect.objectContaining({ code: 'common.service_unavailable' })]);
      expect(orders.cursor).toBeUndefined();
      await Promise.all([orders.poll(), exceptions.poll()]);
      expect(changes).toEqual([]);
      expect((await createClient({ baseUrl: bed.baseUrl, apiKey: key }).get('/v1/analytics/exceptions')).exceptions.length).toBeGreaterThan(0);
      const placed = await bed.console.placeOrder({ workspaceId: tenant.workspaceId });
      await bed.settle();
      await orders.poll();
      expect(changes).toEqual([{ kind: 'changed', record: expect.objectContaining({ orderId: placed.orderId }) }]);
    } finally {
      await Promise.all([orders.stop(), exceptions.stop()]);
    }
  });

  test('exceptions: every exception once as new, nothing more while nothing changes', async () => {
    const client = createClient({ baseUrl: bed.baseUrl, apiKey: key });
    const changes: unknown[] = [];
    const watcher = client.watch.exceptions({ intervalMs: 60_000, onChange: (change) => void changes.push(change) });
    try {
      await vi.waitFor(() => expect(watcher.polls).toBe(1), { timeout: 20_000 });
      const report = await client.get('/v1/analytics/exceptions');
      const keys = new Set(report.exceptions.map((exception) => `${exception.metric} ${exception.drillDownId}`));
      expect(changes).toHaveLength(keys.size);
      expect(keys.size).toBeGreaterThan(0);
      await watcher.poll();
      expect(changes).toHaveLength(keys.size);
    } finally {
      await watcher.stop();
    }
  });
});
