import type { CursorCodec, CursorScope } from './cursorCodec.js';

export type ListPage<Item> = { data: Item[]; hasMore: boolean; nextCursor?: string };

/** A list that is not paginated: everything, one terminal page. */
export function terminalPage<Item>(items: readonly Item[]): ListPage<Item> {
  return { data: [...items], hasMore: false };
}

/**
 * A page from a keyset query that fetched `limit + 1` rows: the extra row only says that another
 * page exists; the cursor points after the last row returned.
 */
export function keysetPage<Row, Item>(
  rows: readonly Row[],
  limit: number,
  paging: { codec: CursorCodec; scope: CursorScope; positionOf: (row: Row) => string; itemOf: (row: Row) => Item },
): ListPage<Item> {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  const data = shown.map(paging.itemOf);
  if (rows.length <= limit || last === undefined) return { data, hasMore: false };
  return { data, hasMore: true, nextCursor: paging.codec.encode(paging.scope, paging.positionOf(last)) };
}
