import { StringDecoder } from 'node:string_decoder';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { sql } from '../platform/sql.js';
import type { LogBatch, LogPosition, RecordedEvent } from './eventStore.js';

/**
 * The log read as a stream: `COPY (SELECT …) TO STDOUT` on a pg client of its own, one event a
 * line of plain columns, cut into batches here. No per-batch JSON aggregation or formatting on the
 * server, no round trip per batch: the fastest way out of Postgres.
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
    // The columns leave in their text form, which depends on these two settings (parseTimestamp).
    await client.query(driverText(sql.fragment`SET TimeZone TO 'UTC'`));
    await client.query(driverText(sql.fragment`SET DateStyle TO 'ISO'`));
    // Plain columns: formatting them in SQL (json_build_array, to_char) doubles the server's work.
    const copy = driverText(sql.fragment`
      COPY (
        SELECT transaction_id, global_position, stream_name, stream_revision, event_id, event_type, schema_version, tenant_id,
          occurred_at, recorded_at, data
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
      lines.push(text.slice(start, end));
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

const columnCount = 11;

/** Built in two steps (data comes from one parse of the whole batch), read-only afterwards. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** COPY text lines (tab-separated columns) to recorded events; the data of the batch in one JSON.parse. */
function toBatch(lines: readonly string[]): LogBatch {
  const events = new Array<Mutable<RecordedEvent>>(lines.length);
  const data = new Array<string>(lines.length);
  // Events of one transaction share its id: convert it once.
  let lastTxText = '';
  let lastTx = 0n;
  for (let index = 0; index < lines.length; index += 1) {
    const fields = (lines[index] ?? '').split('\t');
    if (fields.length !== columnCount) throw new Error(`a log line has ${fields.length} columns, not ${columnCount}`);
    const [tx, seq, streamName, streamRevision, eventId, type, schemaVersion, tenantId, occurredAt, recordedAt, json] = fields.map(unescapeCopyText) as [
      string, string, string, string, string, string, string, string, string, string, string,
    ];
    if (tx !== lastTxText) {
      lastTxText = tx;
      lastTx = BigInt(tx);
    }
    data[index] = json;
    events[index] = {
      position: { tx: lastTx, seq: BigInt(seq) },
      streamName,
      streamRevision: BigInt(streamRevision),
      eventId,
      type,
      schemaVersion: Number(schemaVersion),
      tenantId,
      occurredAt: parseTimestamp(occurredAt),
      recordedAt: parseTimestamp(recordedAt),
      data: undefined,
    };
  }
  const parsed: unknown = JSON.parse(`[${data.join(',')}]`);
  if (!Array.isArray(parsed) || parsed.length !== events.length) throw new Error('the data of a log batch did not parse to one value per event');
  for (let index = 0; index < events.length; index += 1) {
    const event = events[index];
    if (event !== undefined) event.data = parsed[index] as unknown;
  }
  const last = events.at(-1);
  if (last === undefined) throw new Error('an empty log batch');
  return { events, next: last.position };
}

/**
 * A timestamptz in ISO DateStyle and UTC (`2026-01-05 09:30:00.12+00`) as the log's format
 * (`2026-01-05T09:30:00.120Z`): milliseconds truncated, as readLog's to_char does.
 */
export function parseTimestamp(text: string): string {
  const match = timestampPattern.exec(text);
  if (match === null) throw new Error(`unexpected timestamp ${text} in the log stream`);
  const [, day, time, fraction = ''] = match;
  return `${day}T${time}.${fraction.slice(0, 3).padEnd(3, '0')}Z`;
}

const timestampPattern = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d+))?\+00$/;

const copyEscapes: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** COPY's text format escapes backslashes and control characters; most fields have neither. */
function unescapeCopyText(field: string): string {
  if (!field.includes('\\')) return field;
  return field.replace(/\\(.)/g, (_match, character: string) => copyEscapes[character] ?? character);
}
