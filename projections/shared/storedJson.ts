import { z } from 'zod';
import { sqlState } from '../../src/projecting/transientErrors.js';

/**
 * A read model's JSON text of a /v1 item (a generated column such as boxes.balance_json): valid
 * only when it is exactly what JSON.stringify makes of the `item` it parses to (keys in the
 * schema's order, nothing else), so that a checked row (tests, the slonik reads) proves that the
 * stored text and the columns agree.
 */
export function storedJsonText(item: z.AnyZodObject) {
  const strict = item.strict();
  return z.string().refine((text) => {
    try {
      return JSON.stringify(strict.parse(JSON.parse(text))) === text;
    } catch {
      return false;
    }
  }, 'not the JSON text of the item it stands for');
}

/** SQLSTATE undefined_column. */
const undefinedColumn = '42703';
/** How long reads go to the columns after a stored JSON column was found missing. */
const columnsOnlyMs = 5_000;

/**
 * For a list read from a stored JSON column: a generation built by the previous definition of its
 * projection has no such column, and it stays the active one while its rebuild runs beside it. The
 * read of the stored text then fails with undefined_column; the list is read from the columns
 * (`fromColumns` must give the same texts), and so are the next few seconds' lists before the
 * stored text is tried again. One such guard per list statement.
 */
export function storedJsonOrColumns(): <T>(stored: () => Promise<T>, fromColumns: () => Promise<T>) => Promise<T> {
  let columnsOnlyUntil = 0;
  return async (stored, fromColumns) => {
    if (Date.now() >= columnsOnlyUntil) {
      try {
        return await stored();
      } catch (error) {
        if (sqlState(error) !== undefinedColumn) throw error;
        columnsOnlyUntil = Date.now() + columnsOnlyMs;
      }
    }
    return fromColumns();
  };
}
