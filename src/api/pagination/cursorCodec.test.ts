import { describe, expect, test } from 'vitest';
import { ApiError } from '../../platform/errors.js';
import { createCursorCodec } from './cursorCodec.js';

const codec = createCursorCodec('s'.repeat(32));
const orders = { operationId: 'listOrders', tenantId: 'ws_a' };

function rejects(run: () => unknown): void {
  expect(run).toThrow(ApiError);
  try {
    run();
  } catch (error) {
    expect((error as ApiError).code).toBe('common.invalid_request');
  }
}

describe('cursor codec', () => {
  test('given a cursor it issued, when decoded by the same operation and tenant, then the position comes back', () => {
    expect(codec.decode(orders, codec.encode(orders, '42'))).toBe('42');
    expect(codec.decode(orders, codec.encode(orders, 'box/ä ✓'))).toBe('box/ä ✓');
  });

  test('given a cursor of another operation, another tenant or another secret, then it is refused', () => {
    const cursor = codec.encode(orders, '42');
    rejects(() => codec.decode({ ...orders, operationId: 'listFulfillments' }, cursor));
    rejects(() => codec.decode({ ...orders, tenantId: 'ws_b' }, cursor));
    rejects(() => createCursorCodec('t'.repeat(32)).decode(orders, cursor));
  });

  test('given a cursor whose every character is changed in turn, then every variant is refused', () => {
    const cursor = codec.encode(orders, '1234');
    for (let i = 0; i < cursor.length; i += 1) {
      for (const replacement of ['A', 'z', '_', '.', '=']) {
        if (cursor[i] === replacement) continue;
        rejects(() => codec.decode(orders, `${cursor.slice(0, i)}${replacement}${cursor.slice(i + 1)}`));
      }
    }
  });

  test('given the cursor holds position only, then its payload names no filter and no tenant', () => {
    const payload = Buffer.from(codec.encode(orders, '7').split('.')[0] ?? '', 'base64url').toString('utf8');
    expect(JSON.parse(payload)).toEqual({ v: 1, p: '7' });
  });
});
