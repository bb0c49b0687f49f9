import createFetchClient, { type Client, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { buildExport, type ExportBuildOptions, type ExportResult } from './exports.js';
import { ProblemError, problemErrorOf } from './problemError.js';
import type { paths } from './schema.js';
import { changeFeeds, syncChanges, type BoxBalance, type ChangeSync, type FulfillmentListItem, type OrderListItem, type SyncOptions } from './sync.js';
import { budgetOf, reachingFetch, retryingFetch, type Budget, type FetchFunction, type RetryOptions } from './transport.js';
import {
  watchBalances,
  watchExceptions,
  watchFulfillments,
  watchOrders,
  type BalancesWatchOptions,
  type ExceptionsWatchOptions,
  type FeedWatcher,
  type FulfillmentsWatchOptions,
  type OrdersWatchOptions,
  type Watcher,
} from './watch.js';

export type ClientOptions = {
  /** The service's address, e.g. `https://api.dental-supply.example` (without `/v1`). */
  readonly baseUrl: string;
  /** `svc_test_…`, sent as `Authorization: Bearer` on every /v1 request and nowhere else. */
  readonly apiKey: string;
  /** The fetch to use (default: the global fetch). */
  readonly fetch?: (input: Request) => Promise<Response>;
  /** What to do on 429 (default: wait `Retry-After`, at most 3 times; `onRetry` hears of each wait). */
  readonly retry?: RetryOptions;
};

type GetPath = PathsWithMethod<paths, 'get'>;
type Media = `${string}/${string}`;
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];
type OkJson<P extends GetPath> = paths[P]['get'] extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;

/** GET operations that answer the list envelope (`data`, `hasMore`, `nextCursor`). */
export type ListPath = { [P in GetPath]: OkJson<P> extends { data: readonly unknown[]; hasMore: boolean } ? P : never }[GetPath];
export type ListItem<P extends ListPath> = OkJson<P> extends { data: readonly (infer Item)[] } ? Item : never;
type QueryOf<P extends GetPath> = paths[P]['get'] extends { parameters: { query?: infer Query } } ? Query : never;
/** The filters of a list (its `cursor` is the iterator's business). */
export type ListQuery<P extends ListPath> = [NonNullable<QueryOf<P>>] extends [never] ? Record<string, never> : Omit<NonNullable<QueryOf<P>>, 'cursor'>;

export type ReadApiClient = {
  /** openapi-fetch's GET: every /v1 read typed by path; a failure throws ProblemError. */
  readonly GET: Client<paths, Media>['GET'];
  /** openapi-fetch's POST (the export request); a failure throws ProblemError. */
  readonly POST: Client<paths, Media>['POST'];
  /** GET that returns the body itself (a failure throws ProblemError). */
  get<P extends GetPath, Init extends MaybeOptionalInit<paths[P], 'get'>>(
    path: P,
    ...init: InitParam<Init>
  ): Promise<NonNullable<FetchResponse<paths[P]['get'], Init, Media>['data']>>;
  /** Every item of a list, page after page (`limit` 200 unless given), following `nextCursor`. */
  paginate<P extends ListPath>(path: P, query?: ListQuery<P>): AsyncIterableIterator<ListItem<P>>;
  /** The budget as the latest answer reported it; undefined before the first budgeted answer. */
  readonly budget: Budget | undefined;
  readonly exports: {
    /** Requests a briefing export, polls until it is built, downloads and checks the file, returns its bytes and the job's id, checksum, size and asOf. */
    build(options?: ExportBuildOptions): Promise<ExportResult>;
  };
  /**
   * What changed since a saved cursor (the change feeds): an async iterator of the items created
   * or changed, each once in its current form; save its `cursor` afterwards. No cursor: everything.
   */
  readonly sync: {
    orders(options?: SyncOptions): ChangeSync<OrderListItem>;
    fulfillments(options?: SyncOptions): ChangeSync<FulfillmentListItem>;
    balances(options?: SyncOptions): ChangeSync<BoxBalance>;
  };
  /** Polling watchers: the change feeds every `intervalMs` (and the exceptions list). */
  readonly watch: {
    orders(options: OrdersWatchOptions): FeedWatcher;
    fulfillments(options: FulfillmentsWatchOptions): FeedWatcher;
    balances(options: BalancesWatchOptions): FeedWatcher;
    exceptions(options: ExceptionsWatchOptions): Watcher;
  };
};

/** createClient was given options it cannot work with (the message says which and why). */
export class ClientOptionsError extends TypeError {
  override readonly name = 'ClientOptionsError';
}

/** The service's address as the client uses it: no trailing slash; an address ending in /v1 is refused. */
export function serviceAddress(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ClientOptionsError(`baseUrl ${JSON.stringify(baseUrl)} is not an absolute URL (for example https://api.dental-supply.example)`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/v1$/i.test(path)) {
    throw new ClientOptionsError(
      `baseUrl ${JSON.stringify(baseUrl)} ends with /v1: give the service's address without it (${url.origin}${path.slice(0, -3)}); the paths the client sends (/v1/orders, …) carry /v1 themselves`,
    );
  }
  return `${url.origin}${path}`;
}

/** The loose shape used inside the helpers, whose paths are fixed by the code that calls them. */
export type LooseInit = {
  params?: { path?: Record<string, unknown>; query?: Record<string, unknown> };
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
};
export type LooseResult = { data?: unknown; error?: unknown; response: Response };
export type LooseApi = {
  GET(path: string, init?: LooseInit): Promise<LooseResult>;
  POST(path: string, init?: LooseInit): Promise<LooseResult>;
  /** A plain request without the key (download links). */
  download(url: string, signal?: AbortSignal): Promise<Response>;
};

export function createClient(options: ClientOptions): ReadApiClient {
  const baseUrl = serviceAddress(options.baseUrl);
  const baseFetch: FetchFunction = (request) => (options.fetch ?? globalThis.fetch)(request);
  const api = createFetchClient<paths, Media>({
    baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(baseFetch, options.retry),
  });
  let budget: Budget | undefined;
  api.use({
    async onResponse({ response }) {
      budget = budgetOf(response, new Date()) ?? budget;
      // 304 is the answer a conditional request asked for, not a failure.
      if (response.status >= 400) throw await problemErrorOf(response);
      return undefined;
    },
  });
  const loose = api as unknown as LooseApi;
  const internal: LooseApi = {
    GET: (path, init) => loose.GET(path, init),
    POST: (path, init) => loose.POST(path, init),
    download: (url, signal) => reachingFetch(baseFetch)(new Request(url, signal === undefined ? {} : { signal })),
  };
  return {
    GET: api.GET,
    POST: api.POST,
    get: getBody(internal),
    paginate: (path, query) => paginate(internal, path, query) as AsyncIterableIterator<never>,
    get budget() {
      return budget;
    },
    exports: { build: (buildOptions = {}) => buildExport(internal, buildOptions) },
    sync: {
      orders: (syncOptions) => syncChanges(internal, changeFeeds.orders, syncOptions),
      fulfillments: (syncOptions) => syncChanges(internal, changeFeeds.fulfillments, syncOptions),
      balances: (syncOptions) => syncChanges(internal, changeFeeds.balances, syncOptions),
    },
    watch: {
      orders: (watchOptions) => watchOrders(internal, watchOptions),
      fulfillments: (watchOptions) => watchFulfillments(internal, watchOptions),
      balances: (watchOptions) => watchBalances(internal, watchOptions),
      exceptions: (watchOptions) => watchExceptions(internal, watchOptions),
    },
  };
}

/** The typed `get`, over the loose GET (its signature is ReadApiClient's). */
function getBody(api: LooseApi): ReadApiClient['get'] {
  const get = async (path: string, init?: LooseInit): Promise<unknown> => {
    const { data, response } = await api.GET(path, init);
    if (data === undefined) throw await problemErrorOf(response);
    return data;
  };
  return get as ReadApiClient['get'];
}

type Page = { data: unknown[]; hasMore: boolean; nextCursor?: string };

/** Filters are sent again with every page: the cursor holds only a position. */
async function* paginate(api: LooseApi, path: string, query: object = {}): AsyncIterableIterator<unknown> {
  let cursor: string | undefined;
  do {
    const { data, response } = await api.GET(path, { params: { query: { limit: 200, ...query, ...(cursor === undefined ? {} : { cursor }) } } });
    if (!isPage(data)) throw await problemErrorOf(response);
    yield* data.data;
    cursor = data.hasMore ? data.nextCursor : undefined;
  } while (cursor !== undefined);
}

export function isPage(value: unknown): value is Page {
  return typeof value === 'object' && value !== null && Array.isArray((value as Page).data) && typeof (value as Page).hasMore === 'boolean';
}

export { ProblemError };
