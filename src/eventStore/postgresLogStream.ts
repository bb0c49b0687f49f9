import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { driverText, sql } from '../platform/sql.js';
import type { LogBatch, LogPosition, RecordedEvent } from './eventStore.js';
import { eventLine, recordedEventReader } from './postgresLogQueries.js';

/**
 * The log read as a stream: `COPY (SELECT …) TO STDOUT` on a pg client of its own, one event a
 * line (eventLine, the arrays readLog's batches hold; Node parses the lines of each chunk it
 * receives with one native JSON.parse), cut into batches here. No per-batch index descent,
 * aggregation or round trip.
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
        SELECT ${eventLine}
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

/**
 * The batches of one COPY's output. Each chunk is parsed at once, not line by line: its whole lines
 * become one JSON array in place (each line's newline turned into a comma, the byte before the
 * first into '[' and the last newline into ']'), decoded and parsed with one native call each, and
 * every tuple becomes its event right away. The bytes are the CopyData contents pg-copy-streams
 * hands over, which nothing else reads. A line split between chunks is parsed on its own.
 */
async function* copyBatches(stream: AsyncIterable<Buffer>, batchSize: number): AsyncGenerator<LogBatch, void, undefined> {
  const read = recordedEventReader();
  let batch: RecordedEvent[] = [];
  let carry: Buffer | undefined;
  for await (const chunk of stream) {
    let start = 0;
    if (carry !== undefined) {
      const end = chunk.indexOf(newline);
      if (end === -1) {
        carry = Buffer.concat([carry, chunk]);
        continue;
      }
      batch.push(read(JSON.parse(copyText(Buffer.concat([carry, chunk.subarray(0, end)]), 0, carry.length + end))));
      carry = undefined;
      start = end + 1;
      if (batch.length === batchSize) {
        yield toBatch(batch);
        batch = [];
      }
    }
    const last = chunk.lastIndexOf(newline);
    if (last >= start) {
      for (let end = chunk.indexOf(newline, start); end < last; end = chunk.indexOf(newline, end + 1)) chunk[end] = comma;
      chunk[last] = closingBracket;
      let tuples: unknown;
      if (start > 0) {
        // The previous line's newline, already consumed.
        chunk[start - 1] = openingBracket;
        tuples = JSON.parse(copyText(chunk, start - 1, last + 1));
      } else {
        tuples = JSON.parse(`[${copyText(chunk, 0, last + 1)}`);
      }
      for (const tuple of tuples as unknown[]) {
        batch.push(read(tuple));
        if (batch.length === batchSize) {
          yield toBatch(batch);
          batch = [];
        }
      }
      start = last + 1;
    }
    if (start < chunk.length) carry = chunk.subarray(start);
  }
  if (carry !== undefined) throw new Error('the log stream ended inside a line');
  if (batch.length > 0) yield toBatch(batch);
}

const newline = 0x0a;
const comma = 0x2c;
const openingBracket = 0x5b;
const closingBracket = 0x5d;
const backslash = 0x5c;

function toBatch(events: readonly RecordedEvent[]): LogBatch {
  const last = events.at(-1);
  if (last === undefined) throw new Error('an empty log batch');
  return { events, next: last.position };
}

const copyEscapes: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/**
 * Bytes of COPY's text format as the text they stand for. The format escapes backslashes and
 * control characters; JSON text rarely has either (only a backslash of its own escapes). Raw
 * newlines are row ends, never escaped data, and UTF-8 never splits at one.
 */
function copyText(bytes: Buffer, start: number, end: number): string {
  const text = bytes.toString('utf8', start, end);
  const escape = bytes.indexOf(backslash, start);
  if (escape === -1 || escape >= end) return text;
  return text.replace(/\\(.)/g, (_match, character: string) => copyEscapes[character] ?? character);
}
