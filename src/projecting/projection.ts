import { UniqueIntegrityConstraintViolationError, type CommonQueryMethods, type DatabaseTransactionConnection, type FragmentSqlToken, type IdentifierSqlToken, type ListSqlToken, type QuerySqlToken } from 'slonik';
import { sql } from '../platform/sql.js';
import type { EventEnvelope, EventType } from '../events/index.js';
import type { LogPosition } from '../eventStore/eventStore.js';

/** A decoded event as a projection sees it: the domain event and where it sits in the log. */
export type ProjectedEvent = EventEnvelope & {
  readonly position: LogPosition;
  readonly streamName: string;
  /** When the store accepted the event (UTC, ms). */
  readonly recordedAt: string;
};

/** The tables of the generation being written: `table('orders')` is its schema-qualified name. */
export type TableResolver = (name: string) => IdentifierSqlToken;

export type ProjectionContext = {
  /** The batch transaction (a savepoint of it). */
  readonly db: DatabaseTransactionConnection;
  readonly table: TableResolver;
  /**
   * Present while a replay builds a generation nobody else writes: a projection may keep the rows
   * it wrote in memory for the next batches instead of reading them back (RebuildMemory).
   */
  readonly rebuild?: RebuildMemory;
};

/**
 * What projections keep between the batches of one rebuild. It holds only while every batch it
 * saw has committed: the replay marks each apply begun and each commit confirmed, and an apply
 * that begins after an unconfirmed one (a failed or retried transaction) starts from nothing.
 */
export class RebuildMemory {
  private token: object = {};
  private unconfirmed = false;

  /** The value of `slot` in this memory, created on first use. */
  get<T>(slot: RebuildSlot<T>): T {
    return slot.valueIn(this.token);
  }

  begin(): void {
    if (this.unconfirmed) this.forget();
    this.unconfirmed = true;
  }

  committed(): void {
    this.unconfirmed = false;
  }

  forget(): void {
    this.token = {};
    this.unconfirmed = false;
  }
}

/** A projection's typed place in a RebuildMemory. */
export class RebuildSlot<T> {
  private readonly values = new WeakMap<object, T>();

  constructor(private readonly create: () => T) {}

  valueIn(token: object): T {
    let value = this.values.get(token);
    if (value === undefined) {
      value = this.create();
      this.values.set(token, value);
    }
    return value;
  }
}

export type TableDefinition = {
  readonly name: string;
  /** CREATE TABLE and CREATE INDEX statements; tenant_id leads every key and index. */
  readonly create: (table: TableResolver) => readonly QuerySqlToken[];
  /**
   * Indexes (and keys) the projection's own writes never look up, only readers: a replay builds
   * them once after its bulk load, which is several times faster than maintaining them row by
   * row; a live generation has them from the start.
   */
  readonly deferredIndexes?: (table: TableResolver) => readonly QuerySqlToken[];
};

/**
 * A read model, as one value: its name, version, tables, the events it handles and its fold. The
 * live projector, the rebuild, status and readiness all take what they need from it.
 *
 * The fold must give the same rows whether events arrive in one batch or one at a time (replays
 * and crash recovery cut batches differently), take every value from the events (never the wall
 * clock), and throw ProjectionInvariantError when an event does not fit the rows (for example an
 * update of a row that does not exist): the runtime then isolates the event and dead-letters it.
 */
export type Projection = {
  readonly name: string;
  /** Bump when tables or their meaning change: the active generation is then outdated. */
  readonly version: number;
  readonly tables: readonly TableDefinition[];
  readonly handles: readonly EventType[];
  /**
   * How events change the tables: folded in memory, then written at once. A live batch folds its
   * events and writes them with its checkpoint; a rebuild folds many batches of the log before each
   * write, so that a row that changes all through the log (a box's balance) is written once a write
   * rather than once a batch, and each batch's events are let go as soon as they are folded.
   * `inMemoryFolding` builds one from three functions; `insertOnlyFolding` from the rows of an
   * insert-only table (which a rebuild on Postgres then loads with COPY).
   */
  readonly fold: Folding;
  /**
   * The projection decides who may read (tenant and member statuses, checked with every key): a
   * live batch that applies any of its events commits with `synchronous_commit = remote_apply`,
   * so that the hot standbys serving reads have applied it before the commit returns
   * (`commitToStandbys`).
   */
  readonly governsAccess?: true;
};

/** Where a fold reads the rows it does not hold: committed rows of the generation being written. */
export type FoldContext = {
  readonly db: CommonQueryMethods;
  readonly table: TableResolver;
  readonly rebuild?: RebuildMemory;
};

/** A projection's changes as a fold in memory (Projection.fold). */
export type Folding = {
  /** The changes of the next write, empty (a rebuild's memory keeps the rows it holds). */
  readonly begin: (context: FoldContext) => Promise<FoldedChanges>;
  /** Present when the changes are only ever inserted rows, one list of values per event (insertOnlyFolding). */
  readonly rows?: InsertedRows;
};

export type FoldedChanges = {
  /**
   * Folds events in, in log order: the same changes whether they come in one call or several. It
   * may read rows it does not hold, through the context `begin` was given; it writes nothing.
   */
  readonly fold: (events: readonly ProjectedEvent[]) => Promise<void>;
  /** Writes every change folded in (in the caller's transaction, with the checkpoint that covers them). */
  readonly write: (context: ProjectionContext) => Promise<void>;
};

/**
 * A folding whose changes live in memory only (no rows read): `start` makes them empty, `foldOne`
 * folds one event in, `write` writes them.
 */
export function inMemoryFolding<Changes>(
  start: () => Changes,
  foldOne: (event: ProjectedEvent, changes: Changes) => void,
  write: (changes: Changes, context: ProjectionContext) => Promise<void>,
): Folding {
  return {
    begin: async () => {
      const changes = start();
      return {
        fold: async (events) => {
          for (const event of events) foldOne(event, changes);
        },
        write: (context) => write(changes, context),
      };
    },
  };
}

/** How a batch changes the projection's tables: its fold begun, the batch folded in, written. */
export function applyFold(folding: Folding): (events: readonly ProjectedEvent[], context: ProjectionContext) => Promise<void> {
  return async (events, context) => {
    const changes = await folding.begin(context);
    await changes.fold(events);
    await changes.write(context);
  };
}

/** A value of an inserted column: text, a number, a bigint, a boolean, or NULL. */
export type ColumnValue = string | number | bigint | boolean | null;

/** The rows of an insert-only projection (insertOnlyFolding). */
export type InsertedRows = {
  /** The table the rows go to (one of the projection's tables). */
  readonly table: string;
  /** Column names and their Postgres types, in the order of each row's values. */
  readonly columns: readonly (readonly [name: string, type: string])[];
  /**
   * The rows of a batch's handled events, in log order. Throws ProjectionInvariantError when the
   * batch itself contradicts the table (a key twice).
   */
  readonly rowsOf: (events: readonly ProjectedEvent[]) => readonly (readonly ColumnValue[])[];
  /** What a row the table's unique key refuses means (a row recorded twice): the invariant error's message. */
  readonly duplicate: string;
  /**
   * The same rows as a select list over the log table (`events AS e`, one row per handled event),
   * for a rebuild that Postgres loads by itself when the log is in the same database
   * (BulkLoader.loadFromLog): each column as rowsOf makes it of the event upcast to its current
   * version, for every schema version up to `version` (a CASE on `e.schema_version` where a field
   * changed). An event of a later version stops the load, and the replay runs through Node, which
   * upcasts it. The replay tests hold the two to the same digest, on logs of mixed versions too,
   * and `version` to the handled types' current version.
   */
  readonly fromLog?: { readonly select: FragmentSqlToken; readonly version: number };
};

/** The rows' column names, in their values' order, for an INSERT or a COPY. */
export function columnList(rows: InsertedRows): ListSqlToken {
  return sql.join(
    rows.columns.map(([name]) => sql.identifier([name])),
    sql.fragment`, `,
  );
}

/**
 * The fold of a projection whose rows are only ever inserted, one list of column values per event,
 * into one table. Live batches insert them with one statement; a rebuild on Postgres streams them
 * with COPY (BulkLoader) into a table whose indexes come after the load. The insert is plain, not
 * ON CONFLICT DO NOTHING with a row count (the speculative insertion costs about 15 % more): the
 * table's unique key refuses a row recorded twice, which then dead-letters.
 */
export function insertOnlyFolding(rows: InsertedRows): Folding {
  const columns = columnList(rows);
  const types = rows.columns.map(([, type]) => type);
  return {
    rows,
    begin: async () => {
      const pending: (readonly ColumnValue[])[] = [];
      return {
        fold: async (events) => {
          for (const row of rows.rowsOf(events)) pending.push(row);
        },
        write: async ({ db, table }) => {
          if (pending.length === 0) return;
          try {
            await db.query(sql.typeAlias('void')`INSERT INTO ${table(rows.table)} (${columns}) SELECT * FROM ${sql.unnest(pending, types)}`);
          } catch (error) {
            if (!(error instanceof UniqueIntegrityConstraintViolationError)) throw error;
            const detail = error.cause !== undefined && 'detail' in error.cause && typeof error.cause.detail === 'string' ? `: ${error.cause.detail}` : '';
            throw new ProjectionInvariantError(`${rows.duplicate}${detail}`);
          }
        },
      };
    },
  };
}

export class ProjectionInvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectionInvariantError';
  }
}

/** Throws ProjectionInvariantError unless a bulk write touched exactly the rows it meant to. */
export function expectRowCount(what: string, actual: number, expected: number): void {
  if (actual !== expected) {
    throw new ProjectionInvariantError(`${what}: ${expected} row(s) expected, ${actual} found`);
  }
}
