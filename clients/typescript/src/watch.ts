import { isPage, type LooseApi } from './client.js';
import { problemErrorOf } from './problemError.js';
import type { components, paths } from './schema.js';
import { delay } from './transport.js';

type Schemas = components['schemas'];
export type OrderListItem = Schemas['OrderListItem'];
export type FulfillmentListItem = Schemas['FulfillmentListItem'];
export type AnalyticsException = Schemas['AnalyticsException'];

/** A record seen for the first time, or one whose status, version or `updatedAt` moved on. */
export type RecordChange<R> = { readonly kind: 'new'; readonly record: R } | { readonly kind: 'changed'; readonly record: R; readonly previous: R };

/** An exception not seen before, or a different `total`. */
export type ExceptionChange = { readonly kind: 'new'; readonly record: AnalyticsException } | { readonly kind: 'total'; readonly total: number; readonly previousTotal: number };

type CommonWatchOptions<C> = {
  /** Called once per change, one at a time; the next poll waits for it. A change whose call throws is reported again. */
  readonly onChange: (change: C) => void | Promise<void>;
  /** Pause between the end of one poll and the start of the next (default 30 000 ms). */
  readonly intervalMs?: number;
  /** A poll that failed (the watcher goes on); default: `console.error`. */
  readonly onError?: (error: unknown) => void;
  /** false: the first poll only learns what exists and reports nothing (default true: all of it is `new`). */
  readonly reportExisting?: boolean;
};

type OrderStatus = NonNullable<NonNullable<paths['/v1/orders']['get']['parameters']['query']>['status']>;
type FulfillmentStatus = NonNullable<NonNullable<paths['/v1/fulfillments']['get']['parameters']['query']>['status']>;

export type OrdersWatchOptions = CommonWatchOptions<RecordChange<OrderListItem>> & { readonly status?: OrderStatus };
export type FulfillmentsWatchOptions = CommonWatchOptions<RecordChange<FulfillmentListItem>> & { readonly status?: FulfillmentStatus };
export type ExceptionsWatchOptions = CommonWatchOptions<ExceptionChange> & { readonly catalogItemId?: string };

export type Watcher = {
  /** Runs one poll now (after the one in progress, if any: polls never overlap). */
  poll(): Promise<void>;
  /** Stops polling; resolves once the poll in progress, if any, has finished. */
  stop(): Promise<void>;
  /** Polls completed so far (successful or not). */
  readonly polls: number;
};

/** New orders (unseen `orderId`) and status changes (other `status` or higher `version`), from every page of `GET /v1/orders`. */
export function watchOrders(api: LooseApi, options: OrdersWatchOptions): Watcher {
  return watchList(api, '/v1/orders', filters({ status: options.status }), options, (record: OrderListItem) => record.orderId, (previous, current) => previous.status !== current.status || current.version > previous.version);
}

/** New delivery records and progress (other `status` or later `updatedAt`), from every page of `GET /v1/fulfillments`. */
export function watchFulfillments(api: LooseApi, options: FulfillmentsWatchOptions): Watcher {
  return watchList(
    api,
    '/v1/fulfillments',
    filters({ status: options.status }),
    options,
    (record: FulfillmentListItem) => record.orderId,
    (previous, current) => previous.status !== current.status || Date.parse(current.updatedAt) > Date.parse(previous.updatedAt),
  );
}

/** Needs attention: an exception with an unseen `drillDownId` (per metric), or a different `total`. */
export function watchExceptions(api: LooseApi, options: ExceptionsWatchOptions): Watcher {
  const reader = conditionalReader(api);
  const query = filters({ catalogItemId: options.catalogItemId });
  const seen = new Set<string>();
  let total: number | undefined;
  return startWatcher(options, async (firstPoll) => {
    const report = (await reader.read('/v1/analytics/exceptions', query)) as Schemas['ExceptionsReport'];
    for (const record of report.exceptions) {
      const key = `${record.metric}\n${record.drillDownId}`;
      if (seen.has(key)) continue;
      if (!firstPoll || options.reportExisting !== false) await options.onChange({ kind: 'new', record });
      seen.add(key);
    }
    if (total !== undefined && total !== report.total) await options.onChange({ kind: 'total', total: report.total, previousTotal: total });
    total = report.total;
  });
}

function filters(given: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(given).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function watchList<R>(
  api: LooseApi,
  path: string,
  query: Record<string, string>,
  options: CommonWatchOptions<RecordChange<R>>,
  keyOf: (record: R) => string,
  hasChanged: (previous: R, current: R) => boolean,
): Watcher {
  const reader = conditionalReader(api);
  const known = new Map<string, R>();
  return startWatcher(options, async (firstPoll) => {
    const records: R[] = [];
    let cursor: string | undefined;
    do {
      const page = await reader.read(path, { ...query, limit: 200, ...(cursor === undefined ? {} : { cursor }) });
      if (!isPage(page)) throw new Error(`${path} did not answer a list`);
      records.push(...(page.data as R[]));
      cursor = page.hasMore ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    for (const record of records) {
      const key = keyOf(record);
      const previous = known.get(key);
      if (previous === undefined) {
        if (!firstPoll || options.reportExisting !== false) await options.onChange({ kind: 'new', record });
      } else if (hasChanged(previous, record)) {
        await options.onChange({ kind: 'changed', record, previous });
      } else {
        continue;
      }
      // Remembered only once reported: a change whose handler threw comes again.
      known.set(key, record);
    }
  });
}

/**
 * GETs that send the `ETag` of the last answer to the same URL as `If-None-Match`; a 304 gives
 * back the body kept from that answer, without downloading it again.
 */
function conditionalReader(api: LooseApi) {
  const kept = new Map<string, { etag: string; body: unknown }>();
  return {
    async read(path: string, query: Record<string, string | number>): Promise<unknown> {
      const key = `${path}?${new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)])).toString()}`;
      const held = kept.get(key);
      const { data, response } = await api.GET(path, { params: { query }, headers: held === undefined ? {} : { 'If-None-Match': held.etag } });
      if (response.status === 304 && held !== undefined) return held.body;
      if (data === undefined) throw await problemErrorOf(response);
      const etag = response.headers.get('etag');
      if (etag === null) kept.delete(key);
      else kept.set(key, { etag, body: data });
      return data;
    },
  };
}

function startWatcher<C>(options: CommonWatchOptions<C>, pollOnce: (firstPoll: boolean) => Promise<void>): Watcher {
  const intervalMs = options.intervalMs ?? 30_000;
  const onError = options.onError ?? ((error: unknown) => console.error('watch: poll failed', error));
  const stopping = new AbortController();
  let polls = 0;
  let queue: Promise<void> = Promise.resolve();
  const poll = (): Promise<void> => {
    const run = queue.then(async () => {
      try {
        await pollOnce(polls === 0);
      } finally {
        polls += 1;
      }
    });
    queue = run.catch(() => undefined);
    return run;
  };
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      await poll().catch(onError);
      await delay(intervalMs, stopping.signal).catch(() => undefined);
    }
  })();
  return {
    poll,
    stop: async () => {
      stopping.abort();
      await loop;
      await queue;
    },
    get polls() {
      return polls;
    },
  };
}
