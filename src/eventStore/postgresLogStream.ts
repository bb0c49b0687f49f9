import { StringDecoder } from 'node:string_decoder';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { sql } from '../platform/sql.js';
import type { LogBatch, LogPosition } from './eventStore.js';
import { eventTuple, toRecordedEvents } from './postgresLogQueries.js';

/**
 * The log read as a stream: `COPY (SELECT …) TO STDOUT` on a pg client of its own, one event a
 * line (the JSON array readLog builds, so that Node parses a whole batch with one native
 * JSON.parse: Node, not Postgres, is the busier side of a replay), cut into batches here. No
 * per-batch index descent, aggregation or round trip.
 *
 * One COPY covers a segment of `segmentBatches` batches, each in a snapshot of its own: a snapshot
 * held for the whole log would keep Postgres from pruning the row versions a rebuild leaves behind
 * in the same database (every balance update makes one), and the writes slow down as they pile up.
 *
 * Why a raw pg client: slonik has no COPY. The statements are still rendered by slonik's `sql`
 * tag, and nothing from data is spliced into them: COPY takes no bind parameters, so the start
 * position and the segment length travel as session settings (set_config with bound values) that
 * the constant COPY text reads back.
 *
 * Backpressure: pg-copy-streams reads the socket only while this generator is being pulled, so a
 * consumer that holds one batch keeps Postgres waiting instead of buffering the log in memory.
 */
export async function* streamLog(
  connectionUri: string,
  from: LogPosition,
  batchSize: number,
  segmentBatches = 4,
): AsyncGenerator<LogBatch, void, undefined> {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const segmentSize = batchSize * segmentBatches;
  const client = new pg.Client({ connectionString: connectionUri });
  await client.connect();
  let finished = false;
  try {
    const copy = driverText(sql.fragment`
      COPY (
        SELECT ${eventTuple}
        FROM events
        WHERE (transaction_id, global_position) > (current_setting('supply.log_stream_from_tx')::xid8, current_setting('supply.log_stream_from_seq')::bigint)
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY transaction_id, global_position
        LIMIT current_setting('supply.log_stream_limit')::bigint
      ) TO STDOUT
    `);
    let position = from;
    for (;;) {
      const settings = sql.fragment`
        SELECT set_config('supply.log_stream_from_tx', ${position.tx.toString()}, false),
          set_config('supply.log_stream_from_seq', ${position.seq.toString()}, false),
          set_config('supply.log_stream_limit', ${String(segmentSize)}, false)
      `;
      await client.query(driverText(settings), [...settings.values]);
      let rows = 0;
      for await (const batch of copyBatches(client.query(copyTo(copy)), batchSize)) {
        rows += batch.events.length;
        position = batch.next;
        yield batch;
      }
      // A short segment is the end of the log as it stood when that segment began.
      if (rows < segmentSize) break;
    }
    finished = true;
  } finally {
    // A consumer that stops early leaves a COPY running: closing the connection ends it.
    if (!finished) client.connection.stream.destroy();
    await client.end().catch(() => undefined);
  }
}

/** The batches of one COPY's output. */
async function* copyBatches(stream: AsyncIterable<Buffer>, batchSize: number): AsyncGenerator<LogBatch, void, undefined> {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let lines: string[] = [];
  for await (const chunk of stream) {
    const text = carry + decoder.write(chunk);
    let start = 0;
    for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
      lines.push(unescapeCopyText(text.slice(start, end)));
      start = end + 1;
      if (lines.length === batchSize) {
        yield toBatch(lines);
        lines = [];
      }
    }
    carry = text.slice(start);
  }
  carry += decoder.end();
  if (carry.length > 0) throw new Error('the log stream ended inside a line');
  if (lines.length > 0) yield toBatch(lines);
}

/** A fragment's text with pg's placeholders, as slonik's own executeQuery renders it for the driver. */
function driverText(fragment: { readonly sql: string }): string {
  return fragment.sql.replaceAll('$slonik_', '$');
}

function toBatch(lines: readonly string[]): LogBatch {
  // One native parse per batch, as readLog does.
  const events = toRecordedEvents(JSON.parse(`[${lines.join(',')}]`));
  const last = events.at(-1);
  if (last === undefined) throw new Error('an empty log batch');
  return { events, next: last.position };
}

const copyEscapes: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** COPY's text format escapes backslashes and control characters; JSON text rarely has either. */
function unescapeCopyText(line: string): string {
  if (!line.includes('\\')) return line;
  return line.replace(/\\(.)/g, (_match, character: string) => copyEscapes[character] ?? character);
}
