import { describe, expect, it } from 'vitest';
import { JsonText, jsonBodyText } from './jsonText.js';

const balance = { boxId: 'b-"1"', catalogItemId: 'i\\1', warehouseId: 'w\u0001', onHand: 3, reserved: 1, available: 2 };
const stored = (value: unknown) => new JsonText(JSON.stringify(value));

describe('jsonBodyText', () => {
  it('gives the bytes JSON.stringify gives of the values the JsonText stand for', () => {
    const items = [balance, { ...balance, boxId: 'b-2', onHand: -4 }, { ...balance, boxId: 'ü😀\u2028' }];
    const bodies: [unknown, unknown][] = [
      [{ data: items.map(stored), hasMore: true, nextCursor: 'c1' }, { data: items, hasMore: true, nextCursor: 'c1' }],
      [{ data: items.map(stored), hasMore: false }, { data: items, hasMore: false }],
      // Fields JSON.stringify leaves out, and elements it writes as null.
      [{ data: [stored(balance), undefined, () => 1], nextCursor: undefined, f: () => 1 }, { data: [balance, undefined, () => 1], nextCursor: undefined, f: () => 1 }],
      // A JsonText as a field, beside plain objects and arrays.
      [{ one: stored(balance), plain: [balance, { nested: [1, 'x'] }], n: null }, { one: balance, plain: [balance, { nested: [1, 'x'] }], n: null }],
      [{ data: [] }, { data: [] }],
      // The first member left out: no comma before the next.
      [{ skipped: undefined, data: [stored(balance)], last: 'x' }, { skipped: undefined, data: [balance], last: 'x' }],
    ];
    for (const [withText, plain] of bodies) {
      const text = jsonBodyText(withText);
      expect(text).toBe(JSON.stringify(plain));
      // And JSON.stringify of the JsonText body itself (the assistant endpoint) says the same.
      expect(JSON.stringify(withText)).toBe(text);
    }
  });

  it('puts the stored text in as it is, without parsing it', () => {
    expect(jsonBodyText({ data: [new JsonText('{"b":1,"a":2}')] })).toBe('{"data":[{"b":1,"a":2}]}');
  });

  it('leaves bodies without JsonText to JSON.stringify, class instances and arrays included', () => {
    const at = new Date('2026-11-26T08:00:00.000Z');
    for (const body of [{ at, list: [1, 2] }, [stored(balance)], 'text', 7, null, new Map([[1, 2]])]) expect(jsonBodyText(body)).toBe(JSON.stringify(body));
  });
});
