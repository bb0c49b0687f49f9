import fc from 'fast-check';
import { expect, test } from 'vitest';
import { compareBytes } from './results.js';

const sign = (n: number) => Math.sign(n);
const utf8Order = (a: string, b: string) => sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

test('ids compare in UTF-8 byte order, as Postgres orders COLLATE "C" text', () => {
  // U+FF01 is one UTF-16 unit and U+1F600 two (surrogates): UTF-16 order would put the emoji first.
  expect(sign(compareBytes('\uFF01', '\u{1F600}'))).toBe(-1);
  expect(sign(compareBytes('Z', 'a'))).toBe(-1);
  expect(compareBytes('ord_1', 'ord_1')).toBe(0);
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => sign(compareBytes(a, b)) === utf8Order(a, b)));
  fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => sign(compareBytes(a, b)) === utf8Order(a, b)));
});
