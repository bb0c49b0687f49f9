import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../platform/sql.js';
import { logStart, type LogHead, type LogPosition, type ReadAllResult, type RecordedEvent } from './eventStore.js';

/**
 * The reads of the `events` / `streams` tables. The log horizon is the oldest transaction still in
 * flight (`pg_snapshot_xmin` of the statement's snapshot): every transaction below it has ended,
 * so nothing can appear below it later, and readers never go past it.
 */

/**
 * Events travel as ONE JSON text per read: an array of positional arrays. Node then parses a batch
 * with one native JSON.parse instead of decoding, type-parsing and zod-checking every row (the hot
 * path of catch-up and replay); toRecordedEvent checks each element's shape instead. Timestamps
 * are formatted by Postgres (ISO 8601, UTC, milliseconds truncated as elsewhere).
 */
const eventBatch = z.object({ events: z.string() });

/**
 * A text column as a JSON string: quoted as it stands unless it holds a character JSON must escape
 * (a quote, a backslash, a control character); only such a value goes through to_json.
 */
function jsonString(column: string) {
  const value = sql.identifier([column]);
  // The pattern's SQL text is [[:cntrl:]"\\] (the backslash escaped for the regular expression).
  return sql.fragment`CASE WHEN ${value} ~ '[[:cntrl:]"\\\\]' THEN to_json(${value})::text ELSE '"' || ${value} || '"' END`;
}

const isoTimestamp = (column: string) => sql.fragment`to_char(${sql.identifier([column])} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One event as the JSON text of an array: [tx, seq, streamName, streamRevision, eventId, type,
 * schemaVersion, tenantId, occurredAt, recordedAt, data]. Put together by concatenation rather
 * than json_build_array, which costs Postgres twice as much for the same text (the whole 1M-event
 * log: 10.2 s of backend CPU against 4.9 s). Numbers, the event id (a uuid) and the payload (jsonb)
 * are valid JSON as Postgres writes them; the other texts are quoted by jsonString.
 */
export const eventLine = sql.fragment`
  '["' || transaction_id || '",' || global_position || ',' || ${jsonString('stream_name')} || ',' || stream_revision
  || ',"' || event_id || '",' || ${jsonString('event_type')} || ',' || schema_version || ',' || ${jsonString('tenant_id')}
  || ',"' || ${isoTimestamp('occurred_at')} || '","' || ${isoTimestamp('recorded_at')} || '",' || data || ']'
`;

const headRow = z.object({
  tx: z.string().nullable(),
  seq: z.bigint().nullable(),
  recordedAt: z.string().nullable(),
  eventCount: z.bigint(),
});

export async function readLog(db: CommonQueryMethods, from: LogPosition, maxCount: number): Promise<ReadAllResult> {
  if (!Number.isInteger(maxCount) || maxCount < 1) {
    throw new RangeError(`maxCount must be a positive integer, got ${maxCount}`);
  }
  // One event more than asked tells whether anything is visible past the batch.
  const batch = await db.one(sql.type(eventBatch)`
    SELECT coalesce('[' || string_agg(${eventLine}, ',' ORDER BY transaction_id, global_position) || ']', '[]') AS events
    FROM (
      SELECT * FROM events
      WHERE (transaction_id, global_position) > (${from.tx.toString()}::xid8, ${from.seq})
        AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY transaction_id, global_position
      LIMIT ${maxCount + 1}
    ) AS events
  `);
  const all = toRecordedEvents(JSON.parse(batch.events));
  const atHead = all.length <= maxCount;
  const events = atHead ? all : all.slice(0, maxCount);
  const last = events.at(-1);
  return { events, next: last ? last.position : from, atHead };
}

/** Whether committed events wait above the horizon, to become visible once older writers end. */
export async function hasEventsBeyondHorizon(db: CommonQueryMethods): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ pending: z.boolean() }))`
    SELECT EXISTS (SELECT FROM events WHERE transaction_id >= pg_snapshot_xmin(pg_current_snapshot())) AS pending
  `);
}

/**
 * A stream's committed events by revision. No horizon here: one stream's revisions are already
 * serialised by its row lock, and a writer reading before appending needs the latest revision.
 */
export async function readStreamEvents(db: CommonQueryMethods, streamName: string): Promise<RecordedEvent[]> {
  const batch = await db.one(sql.type(eventBatch)`
    SELECT coalesce('[' || string_agg(${eventLine}, ',' ORDER BY stream_revision) || ']', '[]') AS events
    FROM events WHERE stream_id = (SELECT stream_id FROM streams WHERE stream_name = ${streamName})
  `);
  return toRecordedEvents(JSON.parse(batch.events));
}

/** The count is exact, so it scans the visible log (an index-only scan once vacuumed). */
export async function readHead(db: CommonQueryMethods): Promise<LogHead> {
  const row = await db.one(sql.type(headRow)`
    SELECT last.tx, last.seq, last."recordedAt",
      (SELECT count(*) FROM events WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())) AS "eventCount"
    FROM (SELECT) AS one
    LEFT JOIN LATERAL (
      SELECT transaction_id::text AS tx, global_position AS seq, recorded_at AS "recordedAt"
      FROM events
      WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY transaction_id DESC, global_position DESC
      LIMIT 1
    ) AS last ON true
  `);
  return {
    position: row.tx === null || row.seq === null ? logStart : { tx: BigInt(row.tx), seq: row.seq },
    eventCount: row.eventCount,
    lastRecordedAt: row.recordedAt ?? undefined,
  };
}

/** A range on the "C"-collated primary key: exact for any prefix, and served by the index. */
export async function streamNamesWithPrefix(db: CommonQueryMethods, prefix: string): Promise<string[]> {
  const names = await db.anyFirst(sql.type(z.object({ streamName: z.string() }))`
    SELECT stream_name AS "streamName"
    FROM streams
    WHERE stream_name >= ${prefix} AND stream_name < ${prefix} || chr(1114111) AND starts_with(stream_name, ${prefix})
    ORDER BY stream_name
  `);
  return [...names];
}

/** The events of a JSON array of eventLine arrays (readLog's batches, streamLog's lines). */
export function toRecordedEvents(value: unknown): RecordedEvent[] {
  if (!Array.isArray(value)) throw new TypeError('an event batch is a JSON array');
  const read = recordedEventReader();
  const events = new Array<RecordedEvent>(value.length);
  for (let index = 0; index < value.length; index += 1) events[index] = read(value[index]);
  return events;
}

/** Distinct strings a reader shares at most (event types, tenants); beyond it, it starts over. */
const sharedStringsLimit = 4096;

/**
 * One copy of each string that repeats from event to event (type, tenant) for a reader of the log:
 * fewer live strings for the garbage collector to move while batches wait for the database.
 */
export function sharedStrings(): (text: string) => string {
  const shared = new Map<string, string>();
  return (text) => {
    const known = shared.get(text);
    if (known !== undefined) return known;
    if (shared.size >= sharedStringsLimit) shared.clear();
    shared.set(text, text);
    return text;
  };
}

/**
 * Turns eventLine arrays, in log order, into events: one object an event, which is also the shape a
 * projection reads (ProjectedEvent is a subset of its fields), so that a trusted replay hands it on
 * as it is. Strings that repeat from event to event (transaction id, type, tenant, recordedAt of one
 * transaction) are kept once: fewer live strings for the garbage collector to move while batches
 * wait for the database.
 */
export function recordedEventReader(): (value: unknown) => RecordedEvent {
  let lastTxText = '';
  let lastTx = 0n;
  let lastRecordedAt = '';
  const share = sharedStrings();
  return (tuple) => {
    if (!Array.isArray(tuple) || tuple.length !== 11) throw new TypeError('an event is an array of 11 fields');
    const [tx, seq, streamName, streamRevision, eventId, type, schemaVersion, tenantId, occurredAt, recordedAt, data] = tuple as unknown[];
    if (
      typeof tx !== 'string' ||
      typeof seq !== 'number' ||
      typeof streamName !== 'string' ||
      typeof streamRevision !== 'number' ||
      typeof eventId !== 'string' ||
      typeof type !== 'string' ||
      typeof schemaVersion !== 'number' ||
      typeof tenantId !== 'string' ||
      typeof occurredAt !== 'string' ||
      typeof recordedAt !== 'string'
    ) {
      throw new TypeError(`event ${String(eventId)} has a field of an unexpected type`);
    }
    // Events of one transaction share its id: convert it once.
    if (tx !== lastTxText) {
      lastTxText = tx;
      lastTx = BigInt(tx);
    }
    if (recordedAt !== lastRecordedAt) lastRecordedAt = recordedAt;
    return {
      position: { tx: lastTx, seq: BigInt(seq) },
      streamName,
      streamRevision: BigInt(streamRevision),
      eventId,
      type: share(type),
      schemaVersion,
      tenantId: share(tenantId),
      occurredAt,
      recordedAt: lastRecordedAt,
      data,
    };
  };
}
