import type { CommonQueryMethods } from 'slonik';
import type { EventEnvelope } from '../events/index.js';

/**
 * A place in the global log, ordered by (tx, seq). For the Postgres store tx is the appending
 * transaction's id (xid8) and seq the global position; for EventStoreDB, the commit and prepare
 * positions. `logStart` is before every event.
 */
export type LogPosition = { readonly tx: bigint; readonly seq: bigint };

export const logStart: LogPosition = Object.freeze({ tx: 0n, seq: 0n });

export function compareLogPositions(a: LogPosition, b: LogPosition): number {
  if (a.tx !== b.tx) return a.tx < b.tx ? -1 : 1;
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
  return 0;
}

/** An event as the store returns it. `data` is raw JSON: decode it with `decodeEvent`. */
export type RecordedEvent = {
  readonly position: LogPosition;
  readonly streamName: string;
  /** 0-based revision of the event within its stream. */
  readonly streamRevision: bigint;
  readonly eventId: string;
  readonly type: string;
  readonly schemaVersion: number;
  readonly tenantId: string;
  readonly occurredAt: string;
  /** When the store accepted the event (UTC, ms). */
  readonly recordedAt: string;
  readonly data: unknown;
};

/**
 * What the writer expects of the stream: `no_stream` (must not exist yet), `stream_exists`, `any`,
 * or the exact revision of the stream's last event.
 */
export type ExpectedRevision = 'no_stream' | 'stream_exists' | 'any' | bigint;

/** Whether a stream at `actual` meets the writer's expectation. */
export function satisfiesExpectedRevision(expected: ExpectedRevision, actual: bigint | 'no_stream'): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return actual === 'no_stream';
  if (expected === 'stream_exists') return actual !== 'no_stream';
  return actual === expected;
}

/**
 * `position` is that of the write's last event. A write without events only checks the expected
 * revision: its result carries the stream's current revision (-1 when the stream does not exist)
 * and logStart.
 */
export type AppendResult = { readonly nextExpectedRevision: bigint; readonly position: LogPosition };

export type StreamWrite = {
  readonly streamName: string;
  readonly expectedRevision: ExpectedRevision;
  readonly events: readonly EventEnvelope[];
};

export type ReadAllResult = {
  readonly events: readonly RecordedEvent[];
  /** Where the next read continues; equals `from` when nothing was read. */
  readonly next: LogPosition;
  /** True when no event past `next` is visible yet. */
  readonly atHead: boolean;
};

/** A batch of a streamed log: never empty; `next` is the position of its last event. */
export type LogBatch = { readonly events: readonly RecordedEvent[]; readonly next: LogPosition };

/** How EventStore.streamAll reads the log. */
export type StreamAllOptions = {
  /** The event types whose data the stream carries (every type's when absent). */
  readonly dataOf?: readonly string[];
  /**
   * Events without their stream name, revision and event id ('', -1n, ''): for a reader that
   * needs only what projections read, and looks an event up by its position (readAll) when it
   * must name it.
   */
  readonly lean?: boolean;
};

export type LogHead = {
  /** Position of the last visible event, or logStart for an empty log. */
  readonly position: LogPosition;
  /** Number of visible events in the log. */
  readonly eventCount: bigint;
  /** recordedAt of the last visible event. */
  readonly lastRecordedAt: string | undefined;
};

export type SubscribeOptions = {
  /** Exclusive: the subscription delivers events after this position. */
  readonly from: LogPosition;
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
};

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${streamName}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/**
 * The event log port. Adapters: Postgres (default, also on PGlite) and EventStoreDB.
 * Ordering promise: readAll and subscribe deliver every event exactly once in LogPosition order,
 * and never deliver an event past one that a still-running writer may yet commit before it.
 */
export interface EventStore {
  readonly kind: 'postgres' | 'eventstoredb';
  append(streamName: string, events: readonly EventEnvelope[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /**
   * Appends to several streams. Atomic on Postgres (one transaction); on EventStoreDB applied
   * stream by stream in the given order.
   */
  appendMany(writes: readonly StreamWrite[]): Promise<readonly AppendResult[]>;
  readStream(streamName: string): Promise<readonly RecordedEvent[]>;
  readAll(from: LogPosition, maxCount: number): Promise<ReadAllResult>;
  /**
   * readAll on the caller's connection, for a store that keeps the log in the read tables'
   * database (Postgres): a transaction that must see the log while it holds locks reads it
   * itself (PGlite has a single session, so another connection would wait for the transaction).
   */
  readonly readAllOn?: (db: CommonQueryMethods, from: LogPosition, maxCount: number) => Promise<ReadAllResult>;
  /**
   * The log after `from` in batches of `batchSize`, read as a stream instead of one query per
   * batch (bulk readers: replays), up to the horizon as it stood when its last segment began. The
   * reader holds one batch ahead of its consumer, so memory does not grow with the log. Read what
   * became visible after it ended with readAll. Absent where a stream would hold the only session
   * (PGlite) or the store has no such read. With `dataOf`, only events of those types carry their
   * data; the others come with `data` undefined (the store does not format it, the reader does not
   * parse it): for a reader that uses the data of a few types only (a replay of some projections).
   */
  readonly streamAll?: (from: LogPosition, batchSize: number, options?: StreamAllOptions) => AsyncIterable<LogBatch>;
  /** Catch-up then live: yields batches (never empty) until the signal aborts. */
  subscribe(options: SubscribeOptions): AsyncIterable<readonly RecordedEvent[]>;
  head(): Promise<LogHead>;
  /** Names of the existing streams that start with `prefix`, sorted. */
  streamNames(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}
