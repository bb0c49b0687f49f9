import { describe, expect, test } from 'vitest';
import { afterLogPosition, feedStart } from '../../../projections/shared/changeFeed.js';
import { ApiError } from '../../platform/errors.js';
import { changePosition } from './changes.js';

describe('change positions in cursors', () => {
  test('given any id (dots, slashes, non-ASCII, empty), then a position survives the cursor text unchanged', () => {
    for (const id of ['ord_1', 'a.b.c', 'ü/ñ 漢字', '', 'x'.repeat(200)]) {
      const position = { tx: 9_223_372_036_854_775_807n, seq: 42n, id };
      const text = changePosition.encode(position);
      expect(text).toMatch(/^\d+\.\d+\.[A-Za-z0-9_-]*$/);
      expect(changePosition.decode(text)).toEqual(position);
    }
    expect(changePosition.decode(changePosition.encode(feedStart))).toEqual(feedStart);
  });

  test('given text that is not a position, then common.invalid_request', () => {
    for (const text of ['', '1.2', '1.2.3.4', 'a.2.x', '1.-2.x', '1.2.x y', '9223372036854775808.1.x', '1.99999999999999999999.x']) {
      expect(() => changePosition.decode(text), text).toThrow(ApiError);
    }
  });

  test('the position after a log position comes after every row changed at it and before every later one', () => {
    const after = afterLogPosition({ tx: 7n, seq: 10n });
    const key = (p: { tx: bigint; seq: bigint; id: string }) => [p.tx, p.seq, p.id] as const;
    const greater = (a: readonly [bigint, bigint, string], b: readonly [bigint, bigint, string]) =>
      a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];
    expect(greater(key(after), key({ tx: 7n, seq: 10n, id: '\u{10FFFF}' }))).toBe(true);
    expect(greater(key({ tx: 7n, seq: 11n, id: 'a' }), key(after))).toBe(true);
    expect(greater(key({ tx: 8n, seq: 0n, id: 'a' }), key(after))).toBe(true);
  });
});
