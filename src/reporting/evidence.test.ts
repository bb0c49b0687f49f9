import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson, evidenceIdOf, evidenceRecord, tenantOfEvidenceId } from './evidence.js';
import type { Subject } from '../analytics/subjects.js';

/**
 * The plain definition, written out by hand: every object's keys sorted. (A sorted copy would not
 * do: objects list integer-like keys such as "0" first whatever order they were added in.)
 */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${sortedJson(record[key])}`)
    .join(',')}}`;
}

describe('canonicalJson', () => {
  test('is JSON.stringify of the value with every object key sorted, whatever order the keys were written in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(sortedJson(value));
        const reversed = JSON.parse(JSON.stringify(value), (_key, item: unknown) =>
          item !== null && typeof item === 'object' && !Array.isArray(item) ? Object.fromEntries(Object.entries(item).reverse()) : item,
        ) as unknown;
        expect(canonicalJson(reversed)).toBe(canonicalJson(value));
      }),
    );
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: undefined }], c: null } })).toBe('{"a":{"c":null,"d":[{"z":1}]},"b":1}');
    expect(canonicalJson({ '': { '0': null, '': '' } })).toBe('{"":{"":"","0":null}}');
    // An own `__proto__` key in one object must not make the others show their prototype.
    expect(canonicalJson(JSON.parse('{"":{"__proto__":null}}'))).toBe('{"":{"__proto__":null}}');
    expect(canonicalJson(JSON.parse('{"b":[{"__proto__":{"a":1}}],"a":{}}'))).toBe('{"a":{},"b":[{"__proto__":{"a":1}}]}');
  });
});

describe('evidence ids', () => {
  const tenantId = 'ws_tenant';
  const checkpoint = { tx: 10n, seq: 7n };
  const figure = { metric: 'CONSUMPTION_TREND', value: 4, unit: 'movements', breakdown: [], truncated: false };
  const subject: Subject = {
    kind: 'metric',
    metric: 'CONSUMPTION_TREND',
    window: { from: '2026-10-01T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' },
    caps: { trend: 20_000 },
  };

  test('name the figure: the same figure at the same checkpoint has one id whatever the moment it was served', () => {
    const first = evidenceRecord(tenantId, subject, '2026-11-01T09:30:00.000Z', checkpoint, figure);
    const later = evidenceRecord(tenantId, subject, '2026-11-01T17:45:12.345Z', checkpoint, { ...figure });
    expect(later.evidenceId).toBe(first.evidenceId);
    expect(first.evidenceId).toMatch(/^ev2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{32}$/);
    expect(tenantOfEvidenceId(first.evidenceId)).toBe(tenantId);
  });

  test('a window digests as its day-aligned bounds, however the request wrote them', () => {
    const json = canonicalJson(figure);
    const shifted: Subject = { ...subject, window: { from: '2026-10-01T13:00:00.000Z', to: '2026-11-01T00:00:00.001Z' } };
    expect(evidenceIdOf(tenantId, shifted, checkpoint, json)).toBe(evidenceIdOf(tenantId, subject, checkpoint, json));
  });

  test('another figure, checkpoint, subject or tenant gives another id', () => {
    const json = canonicalJson(figure);
    const id = evidenceIdOf(tenantId, subject, checkpoint, json);
    const others = [
      evidenceIdOf(tenantId, subject, checkpoint, canonicalJson({ ...figure, value: 5 })),
      evidenceIdOf(tenantId, subject, { tx: 10n, seq: 8n }, json),
      evidenceIdOf(tenantId, { ...subject, window: { from: '2026-10-02T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' } }, checkpoint, json),
      evidenceIdOf(tenantId, { ...subject, caps: { trend: 10 } }, checkpoint, json),
      evidenceIdOf('ws_other', subject, checkpoint, json),
    ];
    expect(new Set([id, ...others]).size).toBe(others.length + 1);
  });

  test('ids of both forms name their tenant; anything else is not an evidence id', () => {
    const encoded = Buffer.from(tenantId, 'utf8').toString('base64url');
    expect(tenantOfEvidenceId(`ev1.${encoded}.${'A'.repeat(32)}`)).toBe(tenantId);
    expect(tenantOfEvidenceId(`ev2.${encoded}.${'A'.repeat(32)}`)).toBe(tenantId);
    expect(tenantOfEvidenceId(`ev3.${encoded}.${'A'.repeat(32)}`)).toBeUndefined();
    expect(tenantOfEvidenceId(`ev2.${encoded}.short`)).toBeUndefined();
  });
});
