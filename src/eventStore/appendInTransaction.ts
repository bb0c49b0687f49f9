import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../platform/sql.js';
import {
  logStart,
  satisfiesExpectedRevision,
  WrongExpectedRevisionError,
  type AppendResult,
  type ExpectedRevision,
  type StreamWrite,
} from './eventStore.js';

/** The channel that wakes live subscribers after each append (real Postgres only). */
export const eventsChannel = 'supply_events';

export type AppendOptions = {
  /** pg_notify at commit; PGlite serves no LISTEN connection, so it is off there. */
  readonly notify: boolean;
};

/** Raised by events_append (migration 0001) when a write cannot claim its stream; nothing stays. */
const conflictSqlState = 'SE409';
const conflictDetail = z.object({ streamName: z.string(), actual: z.string().nullable() });

const appendedRow = z.object({
  streamName: z.string(),
  lastRevision: z.bigint(),
  seq: z.bigint(),
  tx: z.string(),
});
const revisionRow = z.object({ revision: z.bigint() });

/**
 * True when the writes take more than one statement (a stream written twice, or a write without
 * events to check): the caller must then run appendInTransaction inside a transaction. Otherwise
 * the append is a single statement, atomic on its own, and may run directly on the pool, which
 * saves the two round trips of BEGIN and COMMIT.
 */
export function needsTransaction(writes: readonly StreamWrite[]): boolean {
  const names = new Set<string>();
  for (const write of writes) {
    if (write.events.length === 0 || names.has(write.streamName)) return true;
    names.add(write.streamName);
  }
  return false;
}

/**
 * Appends the writes in their order, with as few statements as that allows: one per round of
 * consecutive writes to distinct streams. Runs
 * inside the caller's transaction (exported so that tests can hold one open with the adapter's own
 * code), or alone when needsTransaction() is false.
 */
export async function appendInTransaction(
  connection: CommonQueryMethods,
  writes: readonly StreamWrite[],
  options: AppendOptions,
): Promise<AppendResult[]> {
  const results = new Array<AppendResult>(writes.length);
  for (const round of roundsOfDistinctStreams(writes)) {
    const appends = round.filter((index) => at(writes, index).events.length > 0);
    if (appends.length > 0) {
      const appended = await appendRound(connection, appends.map((index) => at(writes, index)), options);
      appends.forEach((index, position) => {
        results[index] = at(appended, position);
      });
    }
    for (const index of round) {
      const write = at(writes, index);
      if (write.events.length === 0) results[index] = await checkOnly(connection, write);
    }
  }
  return results;
}

/**
 * One call of events_append (migration 0001), one round trip: it claims every stream of the round
 * (checks the expected revision and advances the stream's row under its row lock, so that of two
 * writers expecting the same revision only one succeeds), inserts all events in the given order,
 * and notifies. A write that cannot claim its stream makes it raise, and nothing of the call stays.
 * The SQL lives in a function because the session caches its plans: planning this statement anew
 * on every append cost about a sixth of the database's time per event.
 */
async function appendRound(connection: CommonQueryMethods, writes: readonly StreamWrite[], options: AppendOptions): Promise<AppendResult[]> {
  const claims = writes.map((write) => ({ tenantId: at(write.events, 0).tenantId, ...expectation(write.expectedRevision) }));
  // One JSON parameter for all events: serialised natively in one pass, parsed once by Postgres.
  const events = writes.flatMap((write) =>
    write.events.map((event, offset) => [
      write.streamName,
      offset,
      event.tenantId,
      event.eventId,
      event.type,
      event.schemaVersion,
      event.data,
      event.occurredAt,
    ]),
  );

  let rows: readonly z.infer<typeof appendedRow>[];
  try {
    rows = await connection.any(sql.type(appendedRow)`
      SELECT appended_stream AS "streamName", last_revision AS "lastRevision", last_position AS seq, appended_in::text AS tx
      FROM events_append(
        ${sql.array(writes.map((write) => write.streamName), 'text')},
        ${sql.array(claims.map((claim) => claim.tenantId), 'text')},
        ${sql.array(claims.map((claim) => claim.kind), 'text')},
        ${sql.array(claims.map((claim) => claim.revision), 'int8')},
        ${sql.array(writes.map((write) => write.events.length), 'int8')},
        ${JSON.stringify(events)}::jsonb,
        ${options.notify}
      )
    `);
  } catch (error) {
    throw conflictFrom(error, writes) ?? error;
  }

  const byStream = new Map(rows.map((row) => [row.streamName, row]));
  return writes.map((write) => {
    const row = byStream.get(write.streamName);
    if (!row) throw new Error(`append of ${write.streamName} returned no result`);
    return { nextExpectedRevision: row.lastRevision, position: { tx: BigInt(row.tx), seq: row.seq } };
  });
}

async function checkOnly(connection: CommonQueryMethods, write: StreamWrite): Promise<AppendResult> {
  const current = await connection.maybeOneFirst(sql.type(revisionRow)`
    SELECT revision FROM streams WHERE stream_name = ${write.streamName} FOR SHARE
  `);
  const actual = current ?? 'no_stream';
  if (!satisfiesExpectedRevision(write.expectedRevision, actual)) {
    throw new WrongExpectedRevisionError(write.streamName, write.expectedRevision, actual);
  }
  return { nextExpectedRevision: actual === 'no_stream' ? -1n : actual, position: logStart };
}

function conflictFrom(error: unknown, writes: readonly StreamWrite[]): WrongExpectedRevisionError | undefined {
  if (!(error instanceof Error) || !('code' in error) || error.code !== conflictSqlState || !('detail' in error)) return undefined;
  const detail = typeof error.detail === 'string' ? conflictDetail.safeParse(JSON.parse(error.detail)) : undefined;
  if (!detail?.success) return undefined;
  const { streamName, actual } = detail.data;
  const write = writes.find((candidate) => candidate.streamName === streamName);
  if (!write) return undefined;
  return new WrongExpectedRevisionError(streamName, write.expectedRevision, actual === null ? 'no_stream' : BigInt(actual));
}

/**
 * Splits the writes (by index) into rounds of consecutive writes in which every stream appears
 * once, so that one statement can claim all streams of a round, a stream written twice sees its
 * first write, and the log keeps the order of the writes across streams: events appended in
 * causal order (an order picked, then its fulfillment dispatched) are read back in that order.
 */
function roundsOfDistinctStreams(writes: readonly StreamWrite[]): number[][] {
  const rounds: number[][] = [];
  let round: number[] = [];
  let names = new Set<string>();
  writes.forEach((write, index) => {
    if (names.has(write.streamName)) {
      rounds.push(round);
      round = [];
      names = new Set();
    }
    names.add(write.streamName);
    round.push(index);
  });
  if (round.length > 0) rounds.push(round);
  return rounds;
}

function expectation(expected: ExpectedRevision): { kind: 'no_stream' | 'stream_exists' | 'any' | 'exact'; revision: bigint | null } {
  if (typeof expected !== 'bigint') return { kind: expected, revision: null };
  if (expected < 0n) throw new RangeError(`an expected revision is 0 or more, got ${expected}`);
  return { kind: 'exact', revision: expected };
}

function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new RangeError(`no item at ${index}`);
  return item;
}
