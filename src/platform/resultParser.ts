import { SchemaValidationError, type Interceptor, type QueryResultRow } from 'slonik';

/**
 * Checks every row against the zod schema of `sql.type(schema)` and returns the parsed row, so the
 * types the code relies on are the types the database really returned.
 */
export function createResultParserInterceptor(): Interceptor {
  return {
    name: 'zod-result-parser',
    transformRow: (queryContext, query, row) => {
      const { resultParser } = queryContext;
      if (!resultParser) {
        return row;
      }
      const parsed = resultParser.safeParse(row);
      if (!parsed.success) {
        throw new SchemaValidationError(query, row, parsed.error.issues);
      }
      return parsed.data as QueryResultRow;
    },
  };
}
