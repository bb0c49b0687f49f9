import fc from 'fast-check';
import { expect, test } from 'vitest';
import { compareBytes, compareExceptions, mergeExceptionSources, type ExceptionItem } from './results.js';

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

const tinyText = fc.constantFrom('a', 'b', 'é', '\u{1F600}');
const when = fc.constantFrom('2026-10-01T00:00:00.000Z', '2026-10-02T08:00:00.000Z');
const head = { priority: fc.constantFrom(55, 65), detectedAt: when };
/**
 * Exceptions drawn from few values, so that ties on priority, detectedAt and drill-down are common,
 * and shaped as the sources make them: the drill-down is the record's own id, and what the record
 * is (a box, a stock level, an order line) decides the rest of its reference.
 */
const exceptionArbitrary: fc.Arbitrary<ExceptionItem> = fc.oneof(
  fc.record({ ...head, item: tinyText, warehouse: tinyText }).map(({ item, warehouse, ...rest }): ExceptionItem => ({
    metric: 'LOW_STOCK',
    drillDownType: 'catalog_item',
    drillDownId: item,
    ...rest,
    reference: { catalogItemId: item, warehouseId: warehouse, available: 0, reorderPoint: 5, unitOfMeasure: 'unit' },
  })),
  fc.record({ ...head, box: tinyText }).map(({ box, ...rest }): ExceptionItem => ({
    metric: 'EXPIRING_STOCK',
    drillDownType: 'box',
    drillDownId: box,
    ...rest,
    reference: { boxId: box, catalogItemId: `itm_${box}`, warehouseId: 'wh', expiresOn: '2026-11-02', onHand: 1, unitOfMeasure: 'box' },
  })),
  fc
    .record({ ...head, order: tinyText, line: tinyText, reason: tinyText, expected: fc.integer({ min: 0, max: 2 }), received: fc.integer({ min: 0, max: 2 }) })
    .map(({ order, line, reason, expected, received, ...rest }): ExceptionItem => ({
      metric: 'RECEIPT_DISCREPANCIES',
      drillDownType: 'fulfillment',
      drillDownId: order,
      ...rest,
      reference: { orderId: order, orderNumber: 1, lineId: line, catalogItemId: `itm_${line}`, expectedQty: expected, receivedQty: received, reasonCode: reason },
    })),
  fc.record({ ...head, order: tinyText, exception: tinyText }).map(({ order, exception, ...rest }): ExceptionItem => ({
    metric: 'DELIVERY_EXCEPTIONS',
    drillDownType: 'fulfillment',
    drillDownId: order,
    ...rest,
    reference: { orderId: order, orderNumber: 1, exceptionId: exception, reasonCode: `r_${exception}` },
  })),
);

test('the exceptions order is total: any arrangement of the same exceptions, split into any sources, lists them alike', () => {
  fc.assert(
    fc.property(fc.array(exceptionArbitrary, { maxLength: 30 }), fc.nat(), fc.integer({ min: 1, max: 40 }), (items, seed, cap) => {
      const shuffled = [...items].sort((a, b) => ((JSON.stringify(a).length * 31 + seed) % 7) - ((JSON.stringify(b).length * 31 + seed) % 7));
      const sorted = [...items].sort(compareExceptions);
      expect(JSON.stringify([...shuffled].sort(compareExceptions))).toBe(JSON.stringify(sorted));
      // Sources each given in report order, cut at cap + 1, merge into the first cap of the whole.
      const sources = [0, 1, 2].map((s) => shuffled.filter((_, i) => (i + seed) % 3 === s).sort(compareExceptions).slice(0, cap + 1));
      const merged = mergeExceptionSources(sources, cap);
      expect(JSON.stringify(merged.exceptions)).toBe(JSON.stringify(sorted.slice(0, cap)));
      // Items that compare equal are the same exception.
      for (let i = 1; i < sorted.length; i += 1) {
        if (compareExceptions(sorted[i - 1] as ExceptionItem, sorted[i] as ExceptionItem) === 0) {
          expect(JSON.stringify(sorted[i - 1])).toBe(JSON.stringify(sorted[i]));
        }
      }
    }),
  );
});
