import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { sql, statementTemplate } from './sql.js';

describe('statementTemplate', () => {
  const guard = sql.fragment`owner = ${'ws_fixed'}`;
  const template = statementTemplate(['tenantId', 'after', 'limit'] as const, (parameter) =>
    sql.type(z.object({ id: z.string() }))`
      SELECT id FROM t WHERE tenant_id = ${parameter.tenantId} AND ${guard} AND id > ${parameter.after} ORDER BY id LIMIT ${parameter.limit}
    `,
  );

  test('given values, then the statement is the one the sql tag builds with them: same text, values in their places, a fragment value kept', () => {
    const bound = template({ tenantId: 'ws_a', after: 'box_1', limit: 201 });
    const built = sql.type(z.object({ id: z.string() }))`
      SELECT id FROM t WHERE tenant_id = ${'ws_a'} AND ${guard} AND id > ${'box_1'} ORDER BY id LIMIT ${201}
    `;
    expect(bound.sql).toBe(built.sql);
    expect(bound.values).toEqual(['ws_a', 'ws_fixed', 'box_1', 201]);
    expect(bound.values).toEqual(built.values);
  });

  test('given two calls, then each gets its own values and the text stays the same string', () => {
    const first = template({ tenantId: 'ws_a', after: 'a', limit: 2 });
    const second = template({ tenantId: 'ws_b', after: 'b', limit: 3 });
    expect(second.values).toEqual(['ws_b', 'ws_fixed', 'b', 3]);
    expect(first.values).toEqual(['ws_a', 'ws_fixed', 'a', 2]);
    expect(second.sql).toBe(first.sql);
  });
});
