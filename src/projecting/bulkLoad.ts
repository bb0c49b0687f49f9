import { Readable, type Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { withUtcSession, type Database } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import { driverText, sql } from '../platform/sql.js';
import { handledEvents, planTarget, type BatchTarget, type DecodedBatch } from './applyBatch.js';
import { copyText } from './copyText.js';
import { advanced, checkpointAdvanceStatement, expectCheckpointsAdvanced, tableResolver, type CheckpointAdvance } from './generations.js';
import { ProjectionInvariantError, type BulkRows, type ProjectedEvent } from './projection.js';
import { isTransientDatabaseError } from './transientErrors.js';

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
 * A rebuild's COPY lanes. A projection with `bulkRows` (insert-only, one row per event) does not
 * go through `apply` while it rebuilds: each batch is one transaction on a pg client of its own
 * that moves the checkpoint (the same compare-and-set statement as every batch) and streams the
 * batch's rows with `COPY … FROM STDIN` into the generation's table, which has no index yet (they
 * come after the load). A batch a COPY refuses (a row that breaks the table, a key twice) is rolled
 * back and applied again the ordinary way, which isolates the event at fault and names it.
 *
 * Why a raw pg client: slonik has no COPY, and the checkpoint must commit in the same transaction
 * as the rows. Every statement is still rendered by the `sql` tag.
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
    return target.projection.bulkRows !== undefined;
  }

  /**
   * Applies `batch` to a bulk target in a transaction of its own; undefined when the COPY refused
   * it (the caller then applies it the ordinary way). Transient failures are thrown.
   */
  async apply(target: BatchTarget, batch: DecodedBatch): Promise<BatchTarget | undefined> {
    const bulk = target.projection.bulkRows;
    if (bulk === undefined) throw new Error(`projection ${target.projection.name} has no bulk rows`);
    const { handled, advance } = planTarget(target, batch);
    if (advance === undefined) return target;
    const client = await this.client();
    let healthy = true;
    try {
      await begin(client);
      const moved = await run(client, checkpointAdvanceStatement([advance]));
      expectCheckpointsAdvanced([advance], moved.rowCount ?? 0);
      if (handled.length > 0) {
        const events = handledEvents(batch, handled);
        if (events === undefined) throw new BulkRefusal('an event did not decode');
        const rows = bulk.rowsOf(events);
        await pipeline(Readable.from([Buffer.from(copyText(rows), 'utf8')]), client.query(copyFrom(copyStatement(target, bulk))));
      }
      await run(client, sql.fragment`COMMIT`);
      return { ...target, generation: advanced(target.generation, advance) };
    } catch (error) {
      await run(client, sql.fragment`ROLLBACK`).catch(() => {
        healthy = false;
      });
      // A connection error, or a ROLLBACK that failed: the client is not used again.
      if (isTransientDatabaseError(error)) healthy = false;
      if (!healthy || !isRefusal(error)) throw error;
      this.logger.warn({ projection: target.projection.name, err: error }, 'COPY refused a batch; applying it the ordinary way to find the event at fault');
      return undefined;
    } finally {
      this.release(client, healthy);
    }
  }

  /**
   * One COPY that stays open across many batches of the log (a folding replay): each batch's rows
   * are streamed into it as soon as they are made, while Postgres takes in the earlier ones, and
   * `commit` ends it, moves the checkpoint past every batch it took and commits, all in one
   * transaction. A refusal is thrown like any other failure: the caller replays batch by batch.
   */
  async open(target: BatchTarget): Promise<OpenCopy> {
    const bulk = target.projection.bulkRows;
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

  async close(): Promise<void> {
    const clients = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  }

  private async client(): Promise<pg.Client> {
    const ready = this.idle.pop();
    if (ready !== undefined) return ready;
    const client = new pg.Client({ connectionString: withUtcSession(this.options.connectionUri) });
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
function copyStatement(target: BatchTarget, bulk: BulkRows): string {
  const columns = sql.join(
    bulk.columns.map((column) => sql.identifier([column])),
    sql.fragment`, `,
  );
  return driverText(sql.fragment`COPY ${tableResolver(target.generation.schemaName)(bulk.table)} (${columns}) FROM STDIN`);
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

/** A batch the projection's own rules refuse before anything is sent. */
class BulkRefusal extends Error {}

/**
 * A refusal of the rows themselves: the projection's own check, or SQLSTATE class 22 (data
 * exception) or 23 (integrity constraint violation). The batch is applied again the ordinary way;
 * anything else is the replay's failure.
 */
function isRefusal(error: unknown): boolean {
  if (error instanceof BulkRefusal || error instanceof ProjectionInvariantError) return true;
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' && /^2[23]/.test(code);
}

function run(client: pg.Client, statement: { readonly sql: string; readonly values: readonly unknown[] }): Promise<pg.QueryResult> {
  return client.query(driverText(statement), [...statement.values]);
}
