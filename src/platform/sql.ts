import { createSqlTag } from 'slonik';
import { z } from 'zod';

/**
 * The one sql tag of the service. `void` is for statements that return no rows (DDL, writes
 * without RETURNING, `SELECT FROM f()`): the result parser rejects any row with a column.
 */
export const sql = createSqlTag({
  typeAliases: {
    void: z.object({}).strict(),
  },
});
