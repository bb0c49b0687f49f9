import { StringDecoder } from 'node:string_decoder';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { sql } from '../platform/sql.js';
import type { LogBatch, LogPosition, RecordedEvent } from './eventStore.js';

/**
 * The log read as one stream: `COPY (SELECT …) TO STDOUT` on a pg client of its own, one event a
 * line of plain columns, cut into batches here. One statement and one snapshot for
 * the whole log, no per-batch index descent, JSON aggregation or round trip: the fastest way out
 * of Postgres.
 *
 * Why a raw pg client: slonik has no COPY. The statements are still rendered by slonik's `sql`
 * tag, and nothing from data is spliced into them: COPY takes no bind parameters, so the start
 * position travels as two transaction-local settings (set_config with bound values) that the
 * constant COPY text reads back.
 *
 * Backpressure: pg-copy-streams reads the socket only while this generator is being pulled, so a
 * consumer that holds one batch keeps Postgres waiting instead of buffering the log in memory.
 */
export async function* streamLog(connectionUri: string, from: LogPosition, batchSize: number): AsyncGenerator<LogBatch, void, undefined> {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const client = new pg.Client({ connectionString: connectionUri });
  await client.connect();
  let finished = false;
  try {
    await client.query(driverText(sql.fragment`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`));
    // The columns leave in their text form, which depends on these two settings (parseTimestamp).
    await client.query(driverText(sql.fragment`SET LOCAL TimeZone TO 'UTC'`));
    await client.query(driverText(sql.fragment`SET LOCAL DateStyle TO 'ISO'`));
    const settings = sql.fragment`
      SELECT set_config('supply.log_stream_from_tx', ${from.tx.toString()}, true), set_config('supply.log_stream_from_seq', ${from.seq.toString()}, true)
    `;
    await client.query(driverText(settings), [...settings.values]);
    // Plain columns: formatting them in SQL (json_build_array, to_char) doubles the server's work.
    const copy = sql.fragment`
      COPY (
        SELECT transaction_id, global_position, stream_name, stream_revision, event_id, event_type, schema_version, tenant_id,
          occurred_at, recorded_at, data
        FROM events
        WHERE (transaction_id, global_position) > (current_setting('supply.log_stream_from_tx')::xid8, current_setting('supply.log_stream_from_seq')::bigint)
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY transaction_id, global_position
      ) TO STDOUT
    `;
    const stream = client.query(copyTo(driverText(copy)));
    const decoder = new StringDecoder('utf8');
    let carry = '';
    let lines: string[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) {
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
    await client.query(driverText(sql.fragment`COMMIT`));
    finished = true;
  } finally {
    // A consumer that stops early leaves the COPY running: closing the connection ends it.
    if (!finished) client.connection.stream.destroy();
    await client.end().catch(() => undefined);
  }
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
