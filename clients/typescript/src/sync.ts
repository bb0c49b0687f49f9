import type { LooseApi } from './client.js';
import { problemErrorOf } from './problemError.js';
import type { components } from './schema.js';

type Schemas = components['schemas'];
export type OrderListItem = Schemas['OrderListItem'];
export type FulfillmentListItem = Schemas['FulfillmentListItem'];
export type BoxBalance = Schemas['BoxBalance'];

/** The change feeds, by what they sync. */
export const changeFeeds = {
  orders: '/v1/orders/changes',
  fulfillments: '/v1/fulfillments/changes',
  balances: '/v1/inventory/balances/changes',
} as const;

export type SyncOptions = {
  /** A `cursor` saved from an earlier sync; absent: from the beginning (a full sync). */
  readonly cursor?: string | undefined;
  /** Items per request, 1 to 200 (default 200). */
  readonly limit?: number;
  readonly signal?: AbortSignal;
};

/**
 * The items changed since a cursor, oldest change first, each once in its current form, as an
 * async iterator. Save `cursor` when the loop ends (or whenever you like: it always stands after
 * the items of every page you have gone through, so a sync stopped half way, or a crash, gives
 * some items again and never loses one). Send it back as `cursor` next time, also after a restart.
 */
export type ChangeSync<Item> = AsyncIterable<Item> & {
  /** The cursor to save: the position after the pages consumed so far (the one given, until the first page is through). */
  readonly cursor: string | undefined;
  /** Requests sent so far. */
  readonly requests: number;
};

type FeedPage = { data: unknown[]; hasMore: boolean; nextCursor?: string; syncCursor: string };

function isFeedPage(value: unknown): value is FeedPage {
  return typeof value === 'object' && value !== null && Array.isArray((value as FeedPage).data) && typeof (value as FeedPage).syncCursor === 'string';
}

export function syncChanges<Item>(api: LooseApi, path: string, options: SyncOptions = {}): ChangeSync<Item> {
  let cursor = options.cursor;
  let requests = 0;
  let started = false;
  async function* pages(): AsyncGenerator<Item> {
    for (;;) {
      const query = { limit: options.limit ?? 200, ...(cursor === undefined ? {} : { cursor }) };
      requests += 1;
      const { data, response } = await api.GET(path, { params: { query }, ...(options.signal === undefined ? {} : { signal: options.signal }) });
      if (!isFeedPage(data)) throw await problemErrorOf(response);
      yield* data.data as Item[];
      // Only once every item of the page was taken: a loop left half way keeps the page's start.
      cursor = data.syncCursor;
      if (!data.hasMore) return;
    }
  }
  return {
    [Symbol.asyncIterator]() {
      if (started) throw new Error('a sync is read once: start another one with its cursor');
      started = true;
      return pages();
    },
    get cursor() {
      return cursor;
    },
    get requests() {
      return requests;
    },
  };
}
