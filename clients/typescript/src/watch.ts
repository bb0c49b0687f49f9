import type { LooseApi } from './client.js';
import { problemErrorOf } from './problemError.js';
import type { components } from './schema.js';
import { changeFeeds, syncChanges, type BoxBalance, type FulfillmentListItem, type OrderListItem } from './sync.js';
import { delay } from './transport.js';

type Schemas = components['schemas'];
export type AnalyticsException = Schemas['AnalyticsException'];

/**
 * A record of a change feed: `existing` while a watcher started without a cursor has none yet
 * (what there is: its first poll that went through the feed), `changed` afterwards (created or
 * changed since the previous poll), each in its current form.
 */
export type RecordChange<R> = { readonly kind: 'existing' | 'changed'; readonly record: R };

/** An exception not seen before, or a different `total`. */
export type ExceptionChange = { readonly kind: 'new'; readonly record: AnalyticsException } | { readonly kind: 'total'; readonly total: number; readonly previousTotal: number };

type CommonWatchOptions<C> = {
  /** Called once per change, one at a time; the next poll waits for it. A change whose call throws is reported again. */
  readonly onChange: (change: C) => void | Promise<void>;
  /** Pause between the end of one poll and the start of the next (default 30 000 ms). */
  readonly intervalMs?: number;
  /** A poll that failed (the watcher goes on); default: `console.error`. */
  readonly onError?: (error: unknown) => void;
  /** false: the first poll that succeeds only learns what exists and reports nothing (default true). */
  readonly reportExisting?: boolean;
};

export type ChangeWatchOptions<R> = CommonWatchOptions<RecordChange<R>> & {
  /** A cursor saved from `onCursor` (or a sync): the watcher goes on from there, after a restart too. */
  readonly cursor?: string;
  /** Called after every poll whose changes were all handled, with the cursor to save. */
  readonly onCursor?: (cursor: string) => void | Promise<void>;
};

export type OrdersWatchOptions = ChangeWatchOptions<OrderListItem>;
export type FulfillmentsWatchOptions = ChangeWatchOptions<FulfillmentListItem>;
export type BalancesWatchOptions = ChangeWatchOptions<BoxBalance>;
export type ExceptionsWatchOptions = CommonWatchOptions<ExceptionChange> & { readonly catalogItemId?: string };

export type Watcher = {
  /** Runs one poll now (after the one in progress, if any: polls never overlap). */
  poll(): Promise<void>;
  /** Stops polling; resolves once the poll in progress, if any, has finished. */
  stop(): Promise<void>;
  /** Polls completed so far (successful or not). */
  readonly polls: number;
};

/** A watcher of a change feed. */
export type FeedWatcher = Watcher & {
  /** The cursor after the last poll whose changes were all handled (save it to go on after a restart). */
  readonly cursor: string | undefined;
};

/** Orders created or changed, from `GET /v1/orders/changes`: one request a poll when nothing changed. */
export function watchOrders(api: LooseApi, options: OrdersWatchOptions): FeedWatcher {
  return watchFeed(api, changeFeeds.orders, options);
}

/** Delivery records dispatched or changed, from `GET /v1/fulfillments/changes`. */
export function watchFulfillments(api: LooseApi, options: FulfillmentsWatchOptions): FeedWatcher {
  return watchFeed(api, changeFeeds.fulfillments, options);
}

/** Box balances that changed, from `GET /v1/inventory/balances/changes`. */
export function watchBalances(api: LooseApi, options: BalancesWatchOptions): FeedWatcher {
  return watchFeed(api, changeFeeds.balances, options);
}

/**
 * A watcher over a change feed: each poll syncs from the cursor of the last one. A change whose
 * handler throws ends the poll without moving the cursor, so the next poll reports it again.
 */
function watchFeed<R>(api: LooseApi, path: string, options: ChangeWatchOptions<R>): FeedWatcher {
  let cursor = options.cursor;
  const watcher = startWatcher(options, async () => {
    const sync = syncChanges<R>(api, path, { cursor });
    // Until a poll has gone through the feed (a cursor), what it gives is what exists: a poll that
    // failed, or whose handler threw, learnt nothing.
    const existing = cursor === undefined;
    for await (const record of sync) {
      if (!existing) await options.onChange({ kind: 'changed', record });
      else if (options.reportExisting !== false) await options.onChange({ kind: 'existing', record });
    }
    if (sync.cursor !== undefined && sync.cursor !== cursor) {
      cursor = sync.cursor;
      await options.onCursor?.(cursor);
    }
  });
  return {
    poll: watcher.poll,
    stop: watcher.stop,
    get polls() {
      return watcher.polls;
    },
    get cursor() {
      return cursor;
    },
  };
}

/** Needs attention: an exception with an unseen `drillDownId` (per metric), or a different `total`. */
export function watchExceptions(api: LooseApi, options: ExceptionsWatchOptions): Watcher {
  const reader = conditionalReader(api);
  const query = filters({ catalogItemId: options.catalogItemId });
  const seen = new Set<string>();
  let total: number | undefined;
  return startWatcher(options, async () => {
    const report = (await reader.read('/v1/analytics/exceptions', query)) as Schemas['ExceptionsReport'];
    // Until a poll has gone through a report (a total), its exceptions are what exists.
    const existing = total === undefined;
    for (const record of report.exceptions) {
      const key = `${record.metric}\n${record.drillDownId}`;
      if (seen.has(key)) continue;
      if (!existing || options.reportExisting !== false) await options.onChange({ kind: 'new', record });
      seen.add(key);
    }
    if (total !== undefined && total !== report.total) await options.onChange({ kind: 'total', total: report.total, previousTotal: total });
    total = report.total;
  });
}

function filters(given: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(given).filter((entry): entry is [string, string] => entry[1] !== undefined));
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

function startWatcher<C>(options: CommonWatchOptions<C>, pollOnce: () => Promise<void>): Watcher {
  const intervalMs = options.intervalMs ?? 30_000;
  const onError = options.onError ?? ((error: unknown) => console.error('watch: poll failed', error));
  const stopping = new AbortController();
  let polls = 0;
  let queue: Promise<void> = Promise.resolve();
  const poll = (): Promise<void> => {
    const run = queue.then(async () => {
      try {
        await pollOnce();
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
