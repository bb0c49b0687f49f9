import { describe, expect, test } from 'vitest';
import { budgetCost, invalidParams, readMessages, soleRequestId } from './jsonRpcMessages.js';

const list = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'tools/list' });

describe('the JSON-RPC messages of a POST to /mcp', () => {
  test('not JSON is -32700; JSON that is not JSON-RPC (no jsonrpc member, an empty batch) is -32600', () => {
    expect(readMessages('{', undefined)).toMatchObject({ ok: false, status: 400, code: -32700 });
    expect(readMessages(JSON.stringify({ id: 1, method: 'tools/list' }), '2025-06-18')).toMatchObject({ ok: false, status: 400, code: -32600, message: expect.stringContaining('"jsonrpc": "2.0"') });
    expect(readMessages('[]', undefined)).toMatchObject({ ok: false, code: -32600 });
    expect(readMessages('42', undefined)).toMatchObject({ ok: false, code: -32600 });
  });

  test('a batch is refused from protocol version 2025-06-18 on (header or initialize), accepted before it', () => {
    const batch = JSON.stringify([list(1), list(2)]);
    expect(readMessages(batch, '2025-06-18')).toMatchObject({ ok: false, status: 400, code: -32600, message: expect.stringContaining('no batches') });
    expect(readMessages(batch, '2025-11-25')).toMatchObject({ ok: false, code: -32600 });
    expect(readMessages(batch, '2025-03-26')).toMatchObject({ ok: true, messages: [list(1), list(2)] });
    // Without the header the version an initialize asks for decides; without either, 2025-03-26.
    expect(readMessages(batch, undefined)).toMatchObject({ ok: true });
    const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
    expect(readMessages(JSON.stringify([initialize, list(1)]), undefined)).toMatchObject({ ok: false, code: -32600 });
    expect(readMessages(JSON.stringify(list(1)), '2025-11-25')).toMatchObject({ ok: true });
  });

  test('every message counts against the budget but tool calls, which their tool charges', () => {
    const call = { jsonrpc: '2.0' as const, id: 9, method: 'tools/call', params: { name: 'listClinics' } };
    const initialized = { jsonrpc: '2.0' as const, method: 'notifications/initialized' };
    expect(budgetCost([list(1), list(2), initialized])).toBe(3);
    expect(budgetCost([call])).toBe(0);
    expect(soleRequestId([list(4), initialized])).toBe(4);
    expect(soleRequestId([list(4), list(5)])).toBeNull();
  });

  test('parameters that do not fit their method are named (-32602), not dumped', () => {
    expect(invalidParams({ jsonrpc: '2.0', id: 1, method: 'tools/call' })).toMatch(/^Invalid params for tools\/call: params: /);
    expect(invalidParams({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } })).toMatch(/params\.name/);
    expect(invalidParams({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: {} })).toMatch(/params\.uri/);
    expect(invalidParams({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listClinics' } })).toBeUndefined();
    expect(invalidParams({ jsonrpc: '2.0', id: 1, method: 'unknown/method' })).toBeUndefined();
  });
});
