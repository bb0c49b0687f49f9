import type { RecordedEvent } from './eventStore.js';
import { sharedStrings } from './postgresLogQueries.js';

/**
 * Tuples of `COPY (SELECT transaction_id, global_position, stream_name, stream_revision, event_id,
 * event_type, schema_version, tenant_id, occurred_at, recorded_at, data …) TO STDOUT (FORMAT
 * binary)` as events, the shape readLog gives (and a projection reads: ProjectedEvent is a subset).
 * Each column is read as Postgres sends it: xid8 and bigint as 8 bytes, integer 4, the uuid as its text,
 * timestamptz as microseconds since 2000-01-01 UTC (formatted here as ISO 8601 with milliseconds
 * truncated, as to_char's MS does for readLog), text as UTF-8, jsonb as a version byte and its
 * JSON text. A tuple of another shape (the table changed under the query) stops the read.
 *
 * Strings that repeat from event to event (type, tenant) are kept once, and a transaction's id and
 * the timestamps equal to the previous event's are converted once: fewer live objects for the
 * garbage collector while batches wait for the database.
 *
 * With `dataOptional`, the data column may be NULL (a stream that carries the data of some types
 * only, EventStore.streamAll's `dataOf`): such an event's data is undefined. With `lean`, the
 * stream name, revision and event id are NULL (EventStore.streamAll's `lean`): each event has
 * them empty ('', -1n, '').
 */
export class BinaryEventDecoder {
  /** Where the next tuple begins, after `next`: what the caller keeps for the next chunk. */
  end = 0;
  private header = false;
  private trailer = false;
  private readonly starts = new Int32Array(fieldCount);
  private readonly lengths = new Int32Array(fieldCount);
  private lastTxHigh = -1;
  private lastTxLow = -1;
  private lastTx = 0n;
  private readonly occurred = new TimestampText();
  private readonly recorded = new TimestampText();
  private readonly share = sharedStrings();
  /** Events returned whose data parseData has still to parse, and where that data is. */
  private pending: RecordedEvent[] = [];
  private dataStarts: number[] = [];
  private dataEnds: number[] = [];
  private dataBytes = 0;
  /** Where parseData puts the JSON array together (reused: one allocation, not one a chunk). */
  private scratch = Buffer.allocUnsafe(1 << 16);

  /** Per column: whether the stream may send it NULL. */
  private readonly nullable: readonly boolean[];

  constructor(dataOptional = false, lean = false) {
    this.nullable = columns.map((_, field) => (field === dataField && dataOptional) || (lean && leanFields.includes(field)));
  }

  /** The event of the tuple at `offset`, or undefined when `bytes` end before it does or the trailer came. */
  next(bytes: Buffer, offset: number): RecordedEvent | undefined {
    this.end = offset;
    if (this.trailer) {
      if (offset < bytes.length) throw new Error('the log stream went on after its trailer');
      return undefined;
    }
    if (!this.header) {
      if (bytes.length - offset < headerLength) return undefined;
      if (!bytes.subarray(offset, offset + signature.length).equals(signature)) throw new Error('the log stream is not in COPY binary format');
      const extension = bytes.readUInt32BE(offset + signature.length + 4);
      if (bytes.length - offset < headerLength + extension) return undefined;
      this.header = true;
      offset += headerLength + extension;
      this.end = offset;
    }
    if (bytes.length - offset < 2) return undefined;
    const fields = bytes.readInt16BE(offset);
    if (fields === -1) {
      this.trailer = true;
      this.end = offset + 2;
      return this.next(bytes, offset + 2);
    }
    if (fields !== fieldCount) throw new Error(`a log tuple has ${fields} columns, not ${fieldCount}`);
    let at = offset + 2;
    const { starts, lengths } = this;
    for (let field = 0; field < fieldCount; field += 1) {
      if (bytes.length - at < 4) return undefined;
      const length = bytes.readInt32BE(at);
      at += 4;
      const expected = fixedLengths[field] ?? 0;
      if (length === nullLength && this.nullable[field] === true) {
        starts[field] = at;
        lengths[field] = nullLength;
        continue;
      }
      if (length < 0 || (expected > 0 && length !== expected)) throw new Error(`log column ${columns[field]} has ${length} bytes`);
      if (bytes.length - at < length) return undefined;
      starts[field] = at;
      lengths[field] = length;
      at += length;
    }
    this.end = at;
    return this.event(bytes);
  }

  /** At the end of the COPY: what was left over must be nothing, and the trailer must have come. */
  finish(rest: Buffer | undefined): void {
    if (rest !== undefined && rest.length > 0) throw new Error('the log stream ended inside a tuple');
    if (this.header && !this.trailer) throw new Error('the log stream ended without its trailer');
  }

  private event(bytes: Buffer): RecordedEvent {
    const { starts, lengths } = this;
    const txAt = starts[0] ?? 0;
    const txHigh = bytes.readUInt32BE(txAt);
    const txLow = bytes.readUInt32BE(txAt + 4);
    // Events of one transaction share its id: convert it once.
    if (txHigh !== this.lastTxHigh || txLow !== this.lastTxLow) {
      this.lastTxHigh = txHigh;
      this.lastTxLow = txLow;
      this.lastTx = (BigInt(txHigh) << 32n) | BigInt(txLow);
    }
    const dataAt = starts[dataField] ?? 0;
    const dataLength = lengths[dataField] ?? 0;
    if (dataLength !== nullLength && bytes[dataAt] !== jsonbVersion) throw new Error(`log data in jsonb format ${String(bytes[dataAt])}`);
    // A lean stream leaves the stream name, revision and event id out (all three, or none).
    const lean = lengths[eventIdField] === nullLength;
    const event: RecordedEvent = {
      position: { tx: this.lastTx, seq: bytes.readBigInt64BE(starts[1]) },
      streamName: lean ? '' : text(bytes, starts[2] ?? 0, lengths[2] ?? 0),
      streamRevision: lean ? -1n : bytes.readBigInt64BE(starts[3]),
      eventId: lean ? '' : bytes.toString('latin1', starts[4], (starts[4] ?? 0) + 36),
      type: this.share(text(bytes, starts[5] ?? 0, lengths[5] ?? 0)),
      schemaVersion: bytes.readInt32BE(starts[6]),
      tenantId: this.share(text(bytes, starts[7] ?? 0, lengths[7] ?? 0)),
      occurredAt: this.occurred.of(bytes, starts[8] ?? 0),
      recordedAt: this.recorded.of(bytes, starts[9] ?? 0),
      data: undefined as unknown,
    };
    // Data the stream left out stays undefined.
    if (dataLength === nullLength) return event;
    this.pending.push(event);
    this.dataStarts.push(dataAt + 1);
    this.dataEnds.push(dataAt + dataLength);
    this.dataBytes += dataLength;
    return event;
  }

  /**
   * Parses the data of the events `next` returned from `bytes` since the last call, with one
   * JSON.parse: their JSON texts copied one after the other into a JSON array. Call it before
   * handing those events on, with the same bytes.
   */
  parseData(bytes: Buffer): void {
    const { pending } = this;
    if (pending.length === 0) return;
    if (this.scratch.length < this.dataBytes + 1) this.scratch = Buffer.allocUnsafe(Math.max(this.dataBytes + 1, this.scratch.length * 2));
    const array = this.scratch;
    let at = 0;
    for (let index = 0; index < pending.length; index += 1) {
      array[at] = index === 0 ? openingBracket : comma;
      at += 1 + bytes.copy(array, at + 1, this.dataStarts[index], this.dataEnds[index]);
    }
    array[at] = closingBracket;
    const data = JSON.parse(array.toString('utf8', 0, at + 1)) as unknown[];
    for (let index = 0; index < pending.length; index += 1) (pending[index] as { data: unknown }).data = data[index];
    this.pending = [];
    this.dataStarts = [];
    this.dataEnds = [];
    this.dataBytes = 0;
  }
}

/**
 * A timestamptz column as ISO 8601 text (UTC, milliseconds), the previous value's text kept while
 * it repeats. Only the day goes through Date (it changes seldom from event to event); the time of
 * day is put together from its parts: Date's toISOString for every event cost more than the rest
 * of the decoding.
 */
class TimestampText {
  private high = Number.NaN;
  private low = Number.NaN;
  private last = '';
  private day = Number.NaN;
  /** "YYYY-MM-DDT" of `day`. */
  private readonly dayBytes = Buffer.alloc(11);
  private readonly text = Buffer.from('0000-00-00T00:00:00.000Z', 'latin1');

  of(bytes: Buffer, at: number): string {
    const high = bytes.readInt32BE(at);
    const low = bytes.readUInt32BE(at + 4);
    if (high === this.high && low === this.low) return this.last;
    // Microseconds since 2000-01-01: exact as a double for any date of the next 285 years.
    const ms = Math.floor((high * 2 ** 32 + low) / 1000) + postgresEpochMs;
    const day = Math.floor(ms / msPerDay);
    if (day !== this.day) {
      const iso = new Date(day * msPerDay).toISOString();
      // Years 0000-9999 only: beyond, ISO 8601 needs a sign and more digits (and Date has limits).
      if (iso.length !== 24) throw new Error(`a log timestamp out of range (${iso})`);
      this.day = day;
      this.dayBytes.write(iso.slice(0, 11), 'latin1');
    }
    // Written as bytes and read back as one string: a template literal would leave a tree of
    // string pieces for every event, which the garbage collector then moves with the event.
    const text = this.text;
    this.dayBytes.copy(text, 0);
    let rest = ms - day * msPerDay;
    const hours = Math.floor(rest / 3_600_000);
    rest -= hours * 3_600_000;
    const minutes = Math.floor(rest / 60_000);
    rest -= minutes * 60_000;
    const seconds = Math.floor(rest / 1000);
    rest -= seconds * 1000;
    text[11] = zero + Math.floor(hours / 10);
    text[12] = zero + (hours % 10);
    text[14] = zero + Math.floor(minutes / 10);
    text[15] = zero + (minutes % 10);
    text[17] = zero + Math.floor(seconds / 10);
    text[18] = zero + (seconds % 10);
    text[20] = zero + Math.floor(rest / 100);
    text[21] = zero + (Math.floor(rest / 10) % 10);
    text[22] = zero + (rest % 10);
    this.high = high;
    this.low = low;
    this.last = text.toString('latin1', 0, 24);
    return this.last;
  }
}

const msPerDay = 86_400_000;
const zero = 0x30;

function text(bytes: Buffer, at: number, length: number): string {
  return bytes.toString('utf8', at, at + length);
}


const columns = [
  'transaction_id',
  'global_position',
  'stream_name',
  'stream_revision',
  'event_id::text',
  'event_type',
  'schema_version',
  'tenant_id',
  'occurred_at',
  'recorded_at',
  'data',
] as const;
const fieldCount = columns.length;
const dataField = columns.indexOf('data');
/** The columns a lean stream sends NULL. */
const eventIdField = columns.indexOf('event_id::text');
const leanFields: readonly number[] = [columns.indexOf('stream_name'), columns.indexOf('stream_revision'), eventIdField];
/** The length COPY's binary format gives a NULL. */
const nullLength = -1;
/** Bytes of each fixed-size column (0: any length). */
const fixedLengths = [8, 8, 0, 8, 36, 0, 4, 0, 8, 8, 0] as const;
const signature = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The signature, the flags field and the header extension's length. */
const headerLength = signature.length + 8;
const jsonbVersion = 1;
const openingBracket = 0x5b;
const comma = 0x2c;
const closingBracket = 0x5d;
const postgresEpochMs = Date.UTC(2000, 0, 1);
