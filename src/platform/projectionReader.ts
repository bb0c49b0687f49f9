import pg from 'pg';
import type { CommonQueryMethods, QuerySqlToken } from 'slonik';
import type { z } from 'zod';
import { typeParsers, withUtcSession, type DatabaseKind } from './db.js';
import type { Logger } from './logger.js';
import { driverText } from './sql.js';
import { isDatabaseUnreachable, primaryLocator } from './primaryLocator.js';

/** Reads rows of a statement built with the `sql` tag. */
export type RowReader = {
  /**
   * Every row of `query`. With `nullMeansAbsent`, NULL columns are left out of the row (an
   * optional field is absent, never null), as `withoutNullColumns` does for a checked row.
   */
  rows<Schema extends z.ZodTypeAny>(query: QuerySqlToken<Schema>, options?: RowOptions<z.infer<Schema>>): Promise<readonly z.infer<Schema>[]>;
};

export type RowOptions<Row> = {
  readonly nullMeansAbsent?: boolean;
  /**
   * The row made of its columns' values, in the statement's column order: the same object as the
   * one named by the columns' aliases, but built by an object literal of the statement's own, so
   * that the driver builds no object per row (its one row builder, shared by every statement of
   * the process, spreads a template and stores each column by name: megamorphic, and 2-3x what
   * an array costs on a page of 200 rows). The reader checks it against the named row when it
   * checks rows (tests); a reader that gets named rows anyway ignores it.
   */
  readonly fromColumns?: (columns: readonly unknown[]) => Row;
};

/** The reads of slonik connection: every row checked against its zod schema (as everywhere else). */
export function slonikRowReader(db: CommonQueryMethods): RowReader {
  return { rows: (query) => db.any(query) };
}

/**
 * SQLSTATE raised by `access_refused()` (migration 0008) from inside a read statement whose caller
 * may no longer read. A code of our own, so that no error of Postgres itself is taken for it.
 */
export const accessRefusedCode = 'SA401';

/** Whether a failed statement was refused because its caller may no longer read. */
export function isAccessRefused(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error as { code: unknown }).code === accessRefusedCode;
}

export type ProjectionReader = RowReader & { close(): Promise<void> };

export type ProjectionReaderOptions = {
  readonly kind: DatabaseKind;
  readonly maximumPoolSize: number;
  readonly logger: Logger;
  /**
   * Checks every row against the statement's zod schema (tests). Off in production: the rows are
   * those of our own projections, whose columns the database already constrains, and a zod parse
   * per row cost more than the statement on the hot path.
   */
  readonly validateRows: boolean;
  /**
   * Statement, query and connection bounds (`requestPoolTimeouts`). pg's client-side query
   * timeout also ends a query to a server that no longer answers; the pool then drops that
   * connection, and a request waiting for a connection gives up after the connection timeout.
   */
  readonly timeouts?: { readonly statementMs: number; readonly queryMs: number; readonly connectionMs: number };
};

/** Distinct statement texts given a name of their own; any further ones run unnamed. */
const maxNamedStatements = 500;

/**
 * The hot reads of /v1: statements built with the `sql` tag, run on a `pg` pool of their own as
 * named prepared statements (parsed and planned once per connection, not on every request), with
 * the type parsers of the slonik pools. PGlite is one session shared by every socket connection,
 * so there the statements stay unnamed (their names would collide across connections).
 */
export function createProjectionReader(connectionUri: string, options: ProjectionReaderOptions): ProjectionReader {
  const { kind, logger, validateRows, timeouts } = options;
  const makePool = (url: string): pg.Pool => {
    const made = new pg.Pool({
      connectionString: readerSession(url, kind),
      max: options.maximumPoolSize,
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: timeouts?.connectionMs ?? 10_000,
      ...(timeouts === undefined ? {} : { statement_timeout: timeouts.statementMs, query_timeout: timeouts.queryMs }),
      types: { getTypeParser: getTypeParser as typeof pg.types.getTypeParser },
    });
    // An idle connection that breaks is dropped by the pool; without a listener the error would end the process.
    made.on('error', (error) => logger.warn({ err: error }, 'projection reader: idle connection failed'));
    return made;
  };
  // A multi-host DATABASE_URL: a pool per primary of the moment; one of a former primary is ended, never used again.
  const locator = kind === 'postgres' ? primaryLocator(connectionUri) : undefined;
  const single = locator?.multiHost === true ? undefined : makePool(connectionUri);
  let located: { readonly url: string; readonly pool: pg.Pool } | undefined;
  const locatedPool = async (): Promise<pg.Pool> => {
    if (locator === undefined) throw new Error('unreachable');
    const url = await locator.locate();
    if (located?.url === url) return located.pool;
    const former = located;
    located = { url, pool: makePool(url) };
    if (former !== undefined) void former.pool.end().catch(() => undefined);
    return located.pool;
  };
  const failed = (error: unknown): never => {
    if (locator !== undefined && located !== undefined && isDatabaseUnreachable(error)) locator.suspect(located.url);
    throw error;
  };
  // One server: the promise as it is (no extra step on the hot path).
  const watch = <Result>(work: Promise<Result>): Promise<Result> => (single === undefined ? work.catch(failed) : work);

  const statements = new Map<string, { readonly text: string; readonly name?: string }>();
  const statementOf = (slonikText: string): { readonly text: string; readonly name?: string } => {
    const known = statements.get(slonikText);
    if (known !== undefined) return known;
    const text = driverText({ sql: slonikText });
    const named = kind === 'postgres' && statements.size < maxNamedStatements;
    const statement = named ? { text, name: `projection_read_${statements.size + 1}` } : { text };
    statements.set(slonikText, statement);
    return statement;
  };

  return {
    rows: async (query, rowOptions = {}) => {
      const { fromColumns } = rowOptions;
      const statement = { ...statementOf(query.sql), values: query.values as unknown[] };
      const pool = single ?? (await locatedPool().catch(failed));
      let rows: Record<string, unknown>[];
      if (fromColumns === undefined) {
        rows = (await watch(queryAgainWhenAborted(() => pool.query(statement)))).rows;
      } else {
        const result = await watch(queryAgainWhenAborted(() => pool.query({ ...statement, rowMode: 'array' })));
        const tuples = result.rows as unknown as unknown[][];
        rows = tuples.map(fromColumns) as Record<string, unknown>[];
        if (validateRows) for (const [index, tuple] of tuples.entries()) assertSameRow(rows[index], namedRow(result.fields, tuple));
      }
      if (rowOptions.nullMeansAbsent === true) for (const row of rows) dropNullColumns(row);
      if (!validateRows) return rows;
      return rows.map((row) => query.parser.parse(row) as unknown);
    },
    close: async () => {
      await single?.end();
      await located?.pool.end();
    },
  };
}


/** SQLSTATEs of a statement Postgres aborted to let another transaction through: deadlock_detected, serialization_failure. */
const abortedToLetThrough = new Set(['40P01', '40001']);
/** Runs of a read that Postgres keeps aborting before its error is the answer. */
const readAttempts = 3;

/**
 * A read that lost a deadlock (40P01) or a serialisation conflict (40001, which is also how a hot
 * standby cancels a query in the way of the replay of a DDL) is sent again, as slonik does for the
 * pools' statements outside transactions (queryRetryLimit). Sound because each read is one
 * statement in a transaction of its own, with no effect but its rows: run again, it reads what is
 * committed then. Its lock waits now queue behind whoever won, so the next run goes through. The
 * blue/green switch is built not to deadlock readers (pointViewsForSwitch); this is the second line
 * for whatever else takes a view's lock: a read must not answer 500 because a rebuild finished.
 */
async function queryAgainWhenAborted<Result>(run: () => Promise<Result>): Promise<Result> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;
      if (attempt >= readAttempts || typeof code !== 'string' || !abortedToLetThrough.has(code)) throw error;
    }
  }
}

/**
 * The reader's sessions: UTC, and on Postgres every named statement runs its generic plan, planned
 * once per connection. Left to choose (`auto`), Postgres re-planned the balances page on every
 * execution: its generic plan cannot know `LIMIT $n` and so always looked costlier than a custom
 * one, and planning that statement (view, key guard over three tables) cost more than running it
 * (0.17-0.26 ms of planning against 0.03 for the generic plan; same index scan). The hot reads are
 * keyset reads by tenant, each served by an index whatever the parameters.
 */
export function readerSession(connectionUri: string, kind: DatabaseKind): string {
  const url = new URL(withUtcSession(connectionUri));
  if (kind === 'postgres') url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c plan_cache_mode=force_generic_plan`.trim());
  return url.toString();
}

function namedRow(fields: readonly { readonly name: string }[], tuple: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((field, index) => [field.name, tuple[index]]));
}

/** A row built from its columns must be the row their names make: same keys, same values. */
function assertSameRow(built: Record<string, unknown> | undefined, named: Record<string, unknown>): void {
  const keys = Object.keys(named);
  const same = built !== undefined && Object.keys(built).length === keys.length && keys.every((key) => Object.hasOwn(built, key) && Object.is(built[key], named[key]));
  if (!same) throw new Error(`projection reader: a row built from its columns [${Object.keys(built ?? {}).join(', ')}] is not the row they name [${keys.join(', ')}]`);
}

function dropNullColumns(row: Record<string, unknown>): void {
  for (const key of Object.keys(row)) if (row[key] === null) delete row[key];
}

/** OIDs of the built-in types the slonik pools parse themselves (src/platform/db.ts), and of their arrays. */
const builtinOids: Readonly<Record<string, readonly [scalar: number, array: number]>> = {
  int8: [20, 1016],
  numeric: [1700, 1231],
  timestamptz: [1184, 1185],
  timestamp: [1114, 1115],
  date: [1082, 1182],
};

/** text[]: its parser splits any array literal into its elements' texts. */
const textArrayOid: number = 1009;
const parseArray = pg.types.getTypeParser(textArrayOid) as (value: string) => (string | null)[];

const parsersByOid = new Map<number, (value: string) => unknown>();
for (const { name, parse } of typeParsers) {
  const oids = builtinOids[name];
  if (oids === undefined) throw new Error(`projection reader: no OID known for type ${name}`);
  const [scalar, array] = oids;
  parsersByOid.set(scalar, parse);
  parsersByOid.set(array, (value) => parseArray(value).map((element) => (element === null ? null : parse(element))));
}

function getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (format === 'binary') return pg.types.getTypeParser(oid, 'binary') as (value: string) => unknown;
  return parsersByOid.get(oid) ?? (pg.types.getTypeParser(oid) as (value: string) => unknown);
}
