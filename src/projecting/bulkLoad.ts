import { createPrimaryClient } from '../platform/primaryLocator.js';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import type { QuerySqlToken } from 'slonik';
import { from as copyFrom } from 'pg-copy-streams';
import { z } from 'zod';
import { withUtcSession, type Database } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import { driverText, sql } from '../platform/sql.js';
import type { BatchTarget } from './applyBatch.js';
import { copyText } from './copyText.js';
import { eventSchemas } from '../events/index.js';
import type { LogHead, LogPosition } from '../eventStore/eventStore.js';
import {
  advanced,
  analyzeStatement,
  checkpointAdvanceStatement,
  deferredIndexStatements,
  expectCheckpointsAdvanced,
  tableResolver,
  type CheckpointAdvance,
} from './generations.js';
import { columnList, ProjectionInvariantError, type InsertedRows, type ProjectedEvent } from './projection.js';
import { isTransientDatabaseError } from './transientErrors.js';

/**
 * Events of the log a load from the log (BulkLoader.loadFromLog) takes in one transaction: a
 * replay killed during the load resumes from the last chunk that committed. Each chunk costs a
 * scan of its end on the log's key and a commit.
 */
export const logLoadChunkEvents = 250_000;

/** The end of a chunk of the log: its last event's position and recordedAt (none: the chunk ends at the head). */
const chunkEnd = z.object({ tx: z.string(), seq: z.string(), recordedAt: z.string() }).nullable();

/** Where a replay loads the rows of insert-only projections with COPY (real Postgres only). */
export type BulkLoadOptions = { readonly connectionUri: string };

/**
 * The COPY lanes a database allows: real Postgres, yes; PGlite, no (one session shared by every
 * socket connection, where a second connection's transaction would interleave with the pool's).
 */
export function bulkLoadOf(database: Pick<Database, 'kind' | 'connectionUri'>): { bulkLoad?: BulkLoadOptions } {
  return database.kind === 'postgres' ? { bulkLoad: { connectionUri: database.connectionUri } } : {};
}

/**
 * A rebuild's COPY lanes for insert-only projections (insertOnlyFolding): their rows stream with
 * `COPY … FROM STDIN` into the generation's table (no index yet) and commit with the checkpoint
 * (open), or Postgres loads them from the log (loadFromLog). A raw pg client, because slonik has
 * no COPY and the checkpoint must commit in the rows' transaction; statements still come from `sql`.
 */
export class BulkLoader {
  private readonly idle: pg.Client[] = [];
  private readonly all = new Set<pg.Client>();

  constructor(
    private readonly options: BulkLoadOptions,
    private readonly logger: Logger,
  ) {}

  /** Whether `target` rebuilds through this loader. */
  loads(target: BatchTarget): boolean {
    return target.projection.fold.rows !== undefined;
  }

  /**
   * One COPY open across many batches of the log: each batch's rows stream in as they are made,
   * and `commit` ends it, moves the checkpoint past them and commits, in one transaction. A
   * refusal is thrown like any other failure: the caller replays batch by batch.
   */
  async open(target: BatchTarget): Promise<OpenCopy> {
    const bulk = target.projection.fold.rows;
    if (bulk === undefined) throw new Error(`projection ${target.projection.name} has no bulk rows`);
    const client = await this.client();
    let settled = false;
    const end = (healthy: boolean) => {
      settled = true;
      this.release(client, healthy);
    };
    try {
      await begin(client);
    } catch (error) {
      end(false);
      throw error;
    }
    const stream = client.query(copyFrom(copyStatement(target, bulk)));
    let failure: unknown;
    stream.on('error', (error) => {
      failure ??= error;
    });
    const fail = async (error: unknown): Promise<never> => {
      if (!settled) {
        stream.destroy();
        // The connection is mid-COPY: it is not used again (ending it rolls the transaction back).
        end(false);
      }
      throw error;
    };
    return {
      write: async (events) => {
        if (failure !== undefined) return fail(failure);
        const rows = bulk.rowsOf(events);
        if (rows.length === 0) return;
        if (!stream.write(Buffer.from(copyText(rows), 'utf8'))) await drained(stream).catch(fail);
      },
      commit: async (advance) => {
        try {
          if (failure !== undefined) throw failure;
          stream.end();
          await finished(stream);
          const moved = await run(client, checkpointAdvanceStatement([advance]));
          expectCheckpointsAdvanced([advance], moved.rowCount ?? 0);
          await run(client, sql.fragment`COMMIT`);
        } catch (error) {
          return fail(error);
        }
        end(true);
      },
      abort: async () => {
        if (!settled) {
          stream.destroy();
          end(false);
        }
      },
    };
  }

  /**
   * An insert-only projection loaded by Postgres from the log in the same database
   * (InsertedRows.fromLog), beside Node's folds: `INSERT … SELECT` of its events up to `head`, in
   * transactions of `chunkEvents` events of the log that each move the checkpoint (a killed replay
   * resumes from the last), then its deferred indexes and statistics. It checks what the trusted
   * decode checks: its events at a schema version its select reads (fromLog.version) with object
   * data (log_event_unreadable stops the INSERT), and every type known (a scan of its own unless
   * `typesChecked`: Node's decode reads the same range). A refusal throws LogLoadRefusedError: the replay runs again through
   * Node, which names the event at fault.
   */
  async loadFromLog(
    target: BatchTarget,
    head: LogHead,
    indexes: readonly QuerySqlToken[] = deferredIndexStatements(target.projection, target.generation.schemaName),
    typesChecked = false,
    chunkEvents = logLoadChunkEvents,
  ): Promise<BatchTarget> {
    const bulk = target.projection.fold.rows;
    const fromLog = bulk?.fromLog;
    if (bulk === undefined || fromLog === undefined) throw new Error(`projection ${target.projection.name} has no rows from the log`);
    const { select, version } = fromLog;
    const schemaName = target.generation.schemaName;
    const handles = sql.array([...target.projection.handles], 'text');
    const after = (position: LogPosition) => sql.fragment`(e.transaction_id, e.global_position) > (${position.tx.toString()}::xid8, ${position.seq})`;
    const upTo = (position: LogPosition) => sql.fragment`(e.transaction_id, e.global_position) <= (${position.tx.toString()}::xid8, ${position.seq})`;
    return this.transaction(
      async (client) => {
        if (!typesChecked) {
          const unknown = await run(
            client,
            sql.fragment`
              SELECT e.global_position::text AS position, e.event_type AS type FROM events AS e
              WHERE ${after(target.generation.checkpoint)} AND ${upTo(head.position)} AND e.event_type <> ALL(${sql.array(Object.keys(eventSchemas), 'text')})
              LIMIT 1
            `,
          );
          const first: unknown = unknown.rows[0];
          if (first !== undefined) throw new BulkRefusal(`the log holds an event of a type this code does not know: ${JSON.stringify(first)}`);
        }
        let { generation } = target;
        while (generation.eventsSeen < head.eventCount) {
          const from = generation.checkpoint;
          // The chunk ends at the chunkEvents-th event past the checkpoint, or at the head. The
          // subquery skips to it on the log's key alone (an index-only scan); only the event it
          // finds is read for its recordedAt: an OFFSET over rows read whole reads each skipped one.
          const ends = await run(
            client,
            sql.fragment`
              SELECT e.transaction_id::text AS tx, e.global_position::text AS seq,
                to_char(e.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "recordedAt"
              FROM events AS e
              WHERE (e.transaction_id, e.global_position) = (
                SELECT e.transaction_id, e.global_position FROM events AS e
                WHERE ${after(from)} AND ${upTo(head.position)}
                ORDER BY e.transaction_id, e.global_position OFFSET ${chunkEvents - 1} LIMIT 1
              )
            `,
          );
          const end = chunkEnd.parse(ends.rows[0] ?? null);
          const to = end === null ? head.position : { tx: BigInt(end.tx), seq: BigInt(end.seq) };
          await begin(client);
          // The CASE calls log_event_unreadable (which raises) only for an event it does not read as it is.
          const inserted = await run(
            client,
            sql.fragment`
              INSERT INTO ${tableResolver(schemaName)(bulk.table)} (${columnList(bulk)})
              SELECT ${select} FROM events AS e
              WHERE e.event_type = ANY(${handles}) AND ${after(from)} AND ${upTo(to)}
                AND CASE WHEN e.schema_version BETWEEN 1 AND ${version} AND jsonb_typeof(e.data) = 'object' THEN true
                  ELSE log_event_unreadable(e.global_position, e.event_type, e.schema_version) END
            `,
          );
          const advance: CheckpointAdvance = {
            generation,
            to,
            seen: end === null ? Number(head.eventCount - generation.eventsSeen) : chunkEvents,
            applied: inserted.rowCount ?? 0,
            lastRecordedAt: end?.recordedAt ?? head.lastRecordedAt ?? new Date(0).toISOString(),
          };
          const moved = await run(client, checkpointAdvanceStatement([advance]));
          expectCheckpointsAdvanced([advance], moved.rowCount ?? 0);
          await run(client, sql.fragment`COMMIT`);
          generation = advanced(generation, advance);
          if (end === null) break;
        }
        // Each build on this connection alone, without parallel workers: the load runs beside
        // Node's folds, which are the rebuild's longest path, and a build with workers takes the
        // cores they need for no less CPU.
        for (const statement of indexes) {
          await begin(client);
          await run(client, sql.fragment`SET LOCAL max_parallel_maintenance_workers = 0`);
          await run(client, statement);
          await run(client, sql.fragment`COMMIT`);
        }
        for (const definition of target.projection.tables) await run(client, analyzeStatement(schemaName, definition.name));
        return { ...target, generation };
      },
      (error) => {
        throw new LogLoadRefusedError(target.projection.name, error instanceof Error ? error.message : String(error), error);
      },
    );
  }

  /**
   * `work` on a client of the loader, which opens and commits its own transaction. On a failure
   * the transaction is rolled back; a connection error, or a ROLLBACK that fails, drops the client.
   * A refusal of the rows (isRefusal) on a client still sound goes to `refused`; anything else is thrown.
   */
  private async transaction<T>(work: (client: pg.Client) => Promise<T>, refused: (error: unknown) => T): Promise<T> {
    const client = await this.client();
    let healthy = true;
    try {
      return await work(client);
    } catch (error) {
      await run(client, sql.fragment`ROLLBACK`).catch(() => {
        healthy = false;
      });
      if (isTransientDatabaseError(error)) healthy = false;
      if (!healthy || !isRefusal(error)) throw error;
      return refused(error);
    } finally {
      this.release(client, healthy);
    }
  }

  async close(): Promise<void> {
    const clients = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  }

  private async client(): Promise<pg.Client> {
    const ready = this.idle.pop();
    if (ready !== undefined) return ready;
    const client = createPrimaryClient(this.options.connectionUri, {}, withUtcSession);
    // A connection that breaks while idle is dropped at its next use; without a listener the error would end the process.
    client.on('error', (error) => this.logger.warn({ err: error }, 'bulk load connection failed'));
    await client.connect();
    this.all.add(client);
    return client;
  }

  private release(client: pg.Client, healthy: boolean): void {
    if (healthy) {
      this.idle.push(client);
      return;
    }
    this.all.delete(client);
    void client.end().catch(() => undefined);
  }
}

/**
 * BEGIN of a COPY lane's transaction. As every replay batch: the generation is not read yet, and
 * a crash loses the rows and their checkpoint together, so the commit need not wait for the disk.
 */
async function begin(client: pg.Client): Promise<void> {
  await run(client, sql.fragment`BEGIN`);
  await run(client, sql.fragment`SET LOCAL synchronous_commit TO off`);
}

/** `COPY … FROM STDIN` into the bulk table of the target's generation, its columns in the rows' order. */
function copyStatement(target: BatchTarget, bulk: InsertedRows): string {
  return driverText(sql.fragment`COPY ${tableResolver(target.generation.schemaName)(bulk.table)} (${columnList(bulk)}) FROM STDIN`);
}

/**
 * Resolves once the stream takes writes again; rejects if it fails or closes first. Its listeners
 * go with it (a promise left pending on the stream would reject unhandled when the COPY fails later).
 */
function drained(stream: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const settle = (error?: unknown) => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (error === undefined) resolve();
      else reject(error instanceof Error ? error : new Error(String(error)));
    };
    const onDrain = () => settle();
    const onError = (error: unknown) => settle(error);
    const onClose = () => settle(new Error('the COPY stream closed while rows were waiting to be sent'));
    stream.once('drain', onDrain);
    stream.once('error', onError);
    stream.once('close', onClose);
  });
}

/** A COPY open across batches (BulkLoader.open). */
export type OpenCopy = {
  /** Streams the rows of these events (handled by the projection, in log order). */
  readonly write: (events: readonly ProjectedEvent[]) => Promise<void>;
  /** Ends the COPY, moves the checkpoint and commits. */
  readonly commit: (advance: CheckpointAdvance) => Promise<void>;
  /** Gives up: nothing of it commits. */
  readonly abort: () => Promise<void>;
};

/**
 * BulkLoader.loadFromLog could not load the projection from the log as it stands (an event it does
 * not read as it is, or rows the table refused): the replay runs again without loading from the log.
 */
export class LogLoadRefusedError extends Error {
  constructor(
    readonly projection: string,
    reason: string,
    cause?: unknown,
  ) {
    super(`projection ${projection} could not be loaded from the log by Postgres: ${reason}`, { cause });
    this.name = 'LogLoadRefusedError';
  }
}

/** A batch the projection's own rules refuse before anything is sent. */
class BulkRefusal extends Error {}

/**
 * A refusal of the rows themselves: the projection's own check, or SQLSTATE class 22 (data
 * exception) or 23 (integrity constraint violation). The replay then runs again without loading
 * from the log, which names the event at fault; anything else is the replay's failure.
 */
function isRefusal(error: unknown): boolean {
  if (error instanceof BulkRefusal || error instanceof ProjectionInvariantError) return true;
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' && /^2[23]/.test(code);
}

function run(client: pg.Client, statement: { readonly sql: string; readonly values: readonly unknown[] }): Promise<pg.QueryResult> {
  return client.query(driverText(statement), [...statement.values]);
}
