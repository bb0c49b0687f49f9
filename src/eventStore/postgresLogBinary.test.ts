import { describe, expect, test } from 'vitest';
import type { LogBatch, RecordedEvent } from './eventStore.js';
import { copyBatches } from './postgresLogStream.js';

/** One event as the test writes it, and as the stream must give it back. */
type Row = {
  readonly tx: bigint;
  readonly seq: bigint;
  readonly streamName: string;
  readonly revision: bigint;
  readonly eventId: string;
  readonly type: string;
  readonly tenantId: string;
  /** Microseconds since 2000-01-01 UTC, as Postgres sends a timestamptz. */
  readonly occurredUs: bigint;
  readonly recordedUs: bigint;
  readonly data: unknown;
};

const postgresEpochMs = Date.UTC(2000, 0, 1);

function int8(value: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(value);
  return bytes;
}

function field(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** A tuple of COPY's binary format, the columns in streamLog's order. */
function tuple(row: Row): Buffer {
  const count = Buffer.alloc(2);
  count.writeInt16BE(11);
  const version = Buffer.alloc(4);
  version.writeInt32BE(1);
  return Buffer.concat([
    count,
    ...[
      int8(row.tx),
      int8(row.seq),
      Buffer.from(row.streamName, 'utf8'),
      int8(row.revision),
      Buffer.from(row.eventId, 'latin1'),
      Buffer.from(row.type, 'utf8'),
      version,
      Buffer.from(row.tenantId, 'utf8'),
      int8(row.occurredUs),
      int8(row.recordedUs),
      Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(row.data), 'utf8')]),
    ].map(field),
  ]);
}

const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
const trailer = Buffer.from([0xff, 0xff]);

function isoOf(microseconds: bigint): string {
  // Truncated to the millisecond, as to_char's MS (every timestamp here is after 2000).
  return new Date(Number(microseconds / 1000n) + postgresEpochMs).toISOString();
}

function expected(row: Row): RecordedEvent {
  return {
    position: { tx: row.tx, seq: row.seq },
    streamName: row.streamName,
    streamRevision: row.revision,
    eventId: row.eventId,
    type: row.type,
    schemaVersion: 1,
    tenantId: row.tenantId,
    occurredAt: isoOf(row.occurredUs),
    recordedAt: isoOf(row.recordedUs),
    data: row.data,
  };
}

/** Deterministic pseudo-random numbers (the cut points and timestamps of every run are the same). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function rows(count: number): Row[] {
  const next = random(7);
  const names = ['clinic-ws_a-cli_1', 'tab\there "quoted" \\ back', 'Zürich – 東京 🦷', 'box-ws_b-box_9'];
  let us = 846_000_000_000_000n; // 2026-10-22
  return Array.from({ length: count }, (_, index) => {
    // Steps from a microsecond to two days: sub-millisecond truncation, repeats and day boundaries.
    us += BigInt(Math.floor(next() ** 4 * 172_800_000_000));
    return {
      tx: 5_000_000_000n + BigInt(Math.floor(index / 3)),
      seq: BigInt(index + 1),
      streamName: names[index % names.length] ?? '',
      revision: BigInt(index % 5),
      eventId: `0000${String(index).padStart(4, '0')}-aaaa-4bbb-8ccc-${String(index).padStart(12, '0')}`,
      type: index % 2 === 0 ? 'StockMovementRecorded' : 'ClinicRenamed',
      tenantId: index % 3 === 0 ? 'ws_a' : 'ws_b',
      occurredUs: us,
      recordedUs: us + BigInt(index % 4),
      data: { index, name: names[(index + 1) % names.length], nested: { list: [1, 2.5, null, true], text: 'line\nbreak' } },
    };
  });
}

async function read(chunks: readonly Buffer[], batchSize: number): Promise<LogBatch[]> {
  async function* stream() {
    for (const chunk of chunks) yield Buffer.from(chunk);
  }
  const batches: LogBatch[] = [];
  for await (const batch of copyBatches(stream(), batchSize)) batches.push(batch);
  return batches;
}

function cut(bytes: Buffer, at: readonly number[]): Buffer[] {
  const points = [0, ...at, bytes.length];
  return points.slice(1).map((end, index) => bytes.subarray(points[index], end));
}

describe('the log stream in COPY binary format', () => {
  const written = rows(24);
  const whole = Buffer.concat([header, ...written.map(tuple), trailer]);

  test('every event comes back as readLog gives it, in batches of the size asked, wherever the chunks end', async () => {
    const events = written.map(expected);
    // Every single cut point: each field, length word, header and trailer split across two chunks.
    for (let at = 1; at < whole.length; at += 1) {
      const batches = await read(cut(whole, [at]), 10);
      expect(batches.map((batch) => batch.events.length)).toEqual([10, 10, 4]);
      expect(batches.flatMap((batch) => batch.events)).toEqual(events);
      expect(batches.map((batch) => batch.next)).toEqual([9, 19, 23].map((index) => events[index]?.position));
    }
    // Many small chunks.
    const next = random(11);
    const points = [...new Set(Array.from({ length: 300 }, () => 1 + Math.floor(next() * (whole.length - 1))))].sort((a, b) => a - b);
    expect((await read(cut(whole, points), 7)).flatMap((batch) => batch.events)).toEqual(events);
  });

  test('timestamps are ISO 8601 in UTC with milliseconds, truncated, across days, months and leap years', async () => {
    const next = random(3);
    const instants = Array.from({ length: 2000 }, () => BigInt(Math.floor(next() * 40 * 365.25 * 86_400_000_000)));
    instants.push(0n, 999n, 1000n, 86_399_999_999n, 86_400_000_000n, 131_241_599_999_999n);
    const stamped = instants.map((us, index) => ({ ...written[0], seq: BigInt(index + 1), occurredUs: us, recordedUs: us }) as Row);
    const events = (await read([Buffer.concat([header, ...stamped.map(tuple), trailer])], 5000)).flatMap((batch) => batch.events);
    expect(events.map((event) => event.occurredAt)).toEqual(instants.map(isoOf));
    expect(events.map((event) => event.recordedAt)).toEqual(instants.map(isoOf));
  });

  test('a stream that ends inside a tuple, lacks its trailer, or holds a tuple of another shape is refused', async () => {
    await expect(read([whole.subarray(0, whole.length - 20)], 16)).rejects.toThrow('ended inside a tuple');
    await expect(read([whole.subarray(0, whole.length - 2)], 16)).rejects.toThrow('without its trailer');
    const short = Buffer.from(tuple(written[0] as Row));
    short.writeInt16BE(10);
    await expect(read([Buffer.concat([header, short, trailer])], 16)).rejects.toThrow('10 columns');
    await expect(read([Buffer.concat([Buffer.from('PGCOPY\nxx\r\n\0'), whole.subarray(11)])], 16)).rejects.toThrow('not in COPY binary format');
  });
});
