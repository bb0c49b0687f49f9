import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DatabasePool } from 'slonik';
import type { StreamWrite } from '../src/eventStore/eventStore.js';
import { sql } from '../src/platform/sql.js';

/**
 * The floor to compare appends with: the same rows, streamed by COPY FROM STDIN into a plain
 * table (no keys, no indexes, no revision checks), in one transaction. The rows are rendered
 * while they stream (rendering is inside the timing).
 */
export async function copyBaseline(options: {
  readonly pool: DatabasePool;
  readonly connectionUri: string;
  readonly batches: () => Iterable<readonly StreamWrite[]>;
  readonly onRows: (rows: number) => void;
}): Promise<{ rows: number; seconds: number }> {
  return copyChunks({
    pool: options.pool,
    connectionUri: options.connectionUri,
    chunks: function* () {
      for (const writes of options.batches()) yield renderCopyChunk(writes);
    },
    onRows: options.onRows,
  });
}

/** A chunk of COPY text (one line per event) and the number of rows it holds. */
export type CopyChunk = { readonly text: string; readonly rows: number };

/**
 * The same floor for rows rendered beforehand (`renderCopyChunk`): only the COPY itself is timed,
 * not how the rows were produced.
 */
export async function copyChunks(options: {
  readonly pool: DatabasePool;
  readonly connectionUri: string;
  readonly chunks: () => Iterable<CopyChunk>;
  readonly onRows: (rows: number) => void;
}): Promise<{ rows: number; seconds: number }> {
  await options.pool.query(sql.typeAlias('void')`
    CREATE TABLE copy_baseline (
      stream_name text NOT NULL,
      stream_revision bigint NOT NULL,
      tenant_id text NOT NULL,
      event_id uuid NOT NULL,
      event_type text NOT NULL,
      schema_version integer NOT NULL,
      data jsonb NOT NULL,
      occurred_at timestamptz NOT NULL
    )
  `);
  const copyStatement = sql.fragment`
    COPY copy_baseline (stream_name, stream_revision, tenant_id, event_id, event_type, schema_version, data, occurred_at) FROM STDIN
  `.sql;

  const client = new pg.Client({ connectionString: options.connectionUri });
  await client.connect();
  let rows = 0;
  const started = process.hrtime.bigint();
  try {
    const lines = function* (): Generator<string> {
      for (const chunk of options.chunks()) {
        rows += chunk.rows;
        options.onRows(rows);
        yield chunk.text;
      }
    };
    await pipeline(Readable.from(lines()), client.query(copyFrom(copyStatement)));
  } finally {
    await client.end();
  }
  return { rows, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** The COPY lines of a group of writes. */
export function renderCopyChunk(writes: readonly StreamWrite[]): CopyChunk {
  let text = '';
  let rows = 0;
  for (const write of writes) {
    write.events.forEach((event, offset) => {
      // The synthetic log expects exact revisions (or no_stream for a stream's first write).
      const revision = (typeof write.expectedRevision === 'bigint' ? write.expectedRevision + 1n : 0n) + BigInt(offset);
      text += `${copyText(write.streamName)}\t${revision}\t${copyText(event.tenantId)}\t${event.eventId}\t${copyText(event.type)}\t${event.schemaVersion}\t${copyText(JSON.stringify(event.data))}\t${event.occurredAt}\n`;
      rows += 1;
    });
  }
  return { text, rows };
}

/** COPY's text format: backslash, tab, newline and carriage return are escaped. */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r') : value;
}
