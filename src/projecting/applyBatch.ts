import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { decodeEvent, trustStoredEvent, type EventType } from '../events/index.js';
import { compareLogPositions, type LogPosition, type RecordedEvent } from '../eventStore/eventStore.js';
import type { Logger } from '../platform/logger.js';
import { sql } from '../platform/sql.js';
import { advanceCheckpoints, advanced, tableResolver, type CheckpointAdvance, type Generation } from './generations.js';
import type { ProjectedEvent, Projection, RebuildMemory } from './projection.js';
import { isTransientDatabaseError } from './transientErrors.js';

export type BatchTarget = {
  readonly projection: Projection;
  readonly generation: Generation;
  /** A replay's generation: what the projection keeps in memory between batches. */
  readonly rebuild?: RebuildMemory;
};

/**
 * live: an event a projection cannot apply is dead-lettered and skipped.
 * replay: it stops the replay (ReplayPoisonError).
 */
export type BatchMode = 'live' | 'replay';

export type DeadLetter = {
  readonly projection: string;
  readonly generation: number;
  readonly position: LogPosition;
  readonly eventId: string;
  readonly eventType: string;
  readonly tenantId: string;
  readonly streamName: string;
  readonly error: string;
};

export class ReplayPoisonError extends Error {
  constructor(readonly deadLetter: DeadLetter) {
    super(
      `projection ${deadLetter.projection} cannot apply event ${deadLetter.eventId} (${deadLetter.eventType}) at ` +
        `${deadLetter.position.tx}/${deadLetter.position.seq} of ${deadLetter.streamName}: ${deadLetter.error}`,
    );
    this.name = 'ReplayPoisonError';
  }
}

export type BatchResult = {
  /** The targets with their checkpoints after the batch. */
  readonly targets: readonly BatchTarget[];
  readonly applied: ReadonlyMap<string, number>;
  readonly deadLetters: readonly DeadLetter[];
};

type Decoded = { readonly raw: RecordedEvent; readonly event?: ProjectedEvent; readonly decodeError?: string };

/** A batch of the log with every event decoded (decoding is the costliest step in Node). */
export type DecodedBatch = { readonly events: readonly RecordedEvent[]; readonly decoded: readonly Decoded[] };

/**
 * strict: every event through its zod schema (appends, live projectors, `replay --strict`).
 * trusted: the replay's fast path, type and schema version checked, the stored JSON trusted
 * (trustStoredEvent); an event it cannot read stops the replay with its position.
 */
export type EventDecoding = 'strict' | 'trusted';

/** The trusted path met an event it cannot read without the strict decode. */
export class ReplayDecodeError extends Error {
  constructor(
    readonly event: Pick<RecordedEvent, 'position' | 'eventId' | 'type' | 'schemaVersion' | 'streamName'>,
    reason: string,
  ) {
    super(
      `replay stopped at log position ${event.position.tx}/${event.position.seq} (event ${event.eventId}, ${event.type} ` +
        `v${event.schemaVersion} of ${event.streamName}): ${reason}`,
    );
    this.name = 'ReplayDecodeError';
  }
}

/**
 * Decodes a batch ahead of applying it, so that a reader can decode the next batch while the
 * database writes the current one.
 */
export function decodeBatch(events: readonly RecordedEvent[], decoding: EventDecoding = 'strict', suspects: ReadonlySet<string> = noSuspects): DecodedBatch {
  if (decoding === 'strict') return { events, decoded: events.map(decodeOne) };
  // An event a projector already dead-lettered is known not to be what it claims: decode it strictly.
  return { events, decoded: events.map((raw) => (suspects.size > 0 && suspects.has(raw.eventId) ? decodeOne(raw) : trustOne(raw))) };
}

const noSuspects: ReadonlySet<string> = new Set();

/**
 * Ids of the events dead-lettered by these projections (any generation): the events of the log
 * a replay must not trust. Poison events are rare, so the set stays small.
 */
export async function deadLetteredEventIds(db: CommonQueryMethods, projections: readonly string[]): Promise<ReadonlySet<string>> {
  const ids = await db.anyFirst(sql.type(z.object({ eventId: z.string() }))`
    SELECT DISTINCT event_id AS "eventId" FROM projection_dead_letters WHERE projection = ANY(${sql.array([...projections], 'text')})
  `);
  return new Set(ids);
}

/**
 * Applies one batch of the log to every target inside the caller's transaction: first the
 * checkpoints move by compare-and-set (which also locks them), then each projection applies its
 * events in a savepoint. A projection whose bulk apply fails is retried one event at a time to
 * find the event it cannot apply. Events at or before a target's checkpoint are not given to it
 * again.
 */
export async function applyBatchInTransaction(
  tx: DatabaseTransactionConnection,
  targets: readonly BatchTarget[],
  batch: readonly RecordedEvent[] | DecodedBatch,
  mode: BatchMode,
  logger: Logger,
): Promise<BatchResult> {
  const { events, decoded } = 'decoded' in batch ? batch : decodeBatch(batch);
  const last = events.at(-1);
  if (last === undefined) return { targets, applied: new Map(), deadLetters: [] };

  const plans = targets.map((target) => planTarget(target, { events, decoded }));

  await advanceCheckpoints(
    tx,
    plans.flatMap((plan) => (plan.advance ? [plan.advance] : [])),
  );

  const deadLetters: DeadLetter[] = [];
  const applied = new Map<string, number>();
  for (const { target, handled } of plans) {
    if (handled.length === 0) continue;
    const letters = await applyToTarget(tx, target, handled, mode, logger);
    deadLetters.push(...letters);
    applied.set(target.projection.name, handled.length - letters.length);
  }
  if (deadLetters.length > 0) await recordDeadLetters(tx, deadLetters);

  return {
    targets: plans.map(({ target, advance }) => {
      if (!advance) return target;
      const failed = deadLetters.filter((d) => d.projection === target.projection.name).length;
      return { ...target, generation: advanced(target.generation, { ...advance, applied: advance.applied - failed }) };
    }),
    applied,
    deadLetters,
  };
}

/** What one batch means for one target: the events it handles, and how far its checkpoint moves. */
export type TargetPlan = { readonly target: BatchTarget; readonly handled: readonly Decoded[]; readonly advance: CheckpointAdvance | undefined };

/** The events of `batch` after the target's checkpoint that its projection handles, and its checkpoint's advance. */
export function planTarget(target: BatchTarget, batch: DecodedBatch): TargetPlan {
  const { events, decoded } = batch;
  const last = events.at(-1);
  const handles = new Set<EventType>(target.projection.handles);
  const start = firstAfter(events, target.generation.checkpoint);
  const relevant = decoded.slice(start);
  const handled = relevant.filter((d) => handles.has(d.raw.type as EventType));
  const advance: CheckpointAdvance | undefined =
    relevant.length === 0 || last === undefined
      ? undefined
      : {
          generation: target.generation,
          to: last.position,
          seen: relevant.length,
          applied: handled.length,
          lastRecordedAt: last.recordedAt,
        };
  return { target, handled, advance };
}

async function applyToTarget(
  tx: DatabaseTransactionConnection,
  target: BatchTarget,
  handled: readonly Decoded[],
  mode: BatchMode,
  logger: Logger,
): Promise<DeadLetter[]> {
  const table = tableResolver(target.generation.schemaName);
  const { rebuild } = target;
  const apply = async (events: readonly ProjectedEvent[]) => {
    try {
      await tx.transaction((db) => target.projection.apply(events, { db, table, rebuild }));
    } catch (error) {
      // The savepoint rolled back what the memory may already hold.
      rebuild?.forget();
      throw error;
    }
  };
  const decodable = handled.every((d) => d.event !== undefined);
  if (decodable) {
    try {
      await apply(handled.map((d) => d.event as ProjectedEvent));
      return [];
    } catch (error) {
      if (isTransientDatabaseError(error)) throw error;
      logger.warn({ projection: target.projection.name, err: error }, 'batch could not be applied; isolating the event at fault');
    }
  }
  const letters: DeadLetter[] = [];
  for (const item of handled) {
    let failure = item.decodeError;
    if (item.event) {
      try {
        await apply([item.event]);
      } catch (error) {
        if (isTransientDatabaseError(error)) throw error;
        failure = error instanceof Error ? error.message : String(error);
      }
    }
    if (failure === undefined) continue;
    const letter: DeadLetter = {
      projection: target.projection.name,
      generation: target.generation.generation,
      position: item.raw.position,
      eventId: item.raw.eventId,
      eventType: item.raw.type,
      tenantId: item.raw.tenantId,
      streamName: item.raw.streamName,
      error: failure,
    };
    if (mode === 'replay') throw new ReplayPoisonError(letter);
    logger.error({ ...letter, position: `${letter.position.tx}/${letter.position.seq}` }, 'event dead-lettered: the projection skips it');
    letters.push(letter);
  }
  return letters;
}

async function recordDeadLetters(tx: DatabaseTransactionConnection, letters: readonly DeadLetter[]): Promise<void> {
  await tx.query(sql.typeAlias('void')`
    INSERT INTO projection_dead_letters (projection, generation, position_tx, position_seq, event_id, event_type, tenant_id, stream_name, error)
    SELECT * FROM ${sql.unnest(
      letters.map((d) => [d.projection, d.generation, d.position.tx, d.position.seq, d.eventId, d.eventType, d.tenantId, d.streamName, d.error]),
      ['text', 'int4', 'int8', 'int8', 'text', 'text', 'text', 'text', 'text'],
    )}
    ON CONFLICT DO NOTHING
  `);
  const counts = new Map<string, { generation: number; count: number }>();
  for (const letter of letters) {
    const entry = counts.get(letter.projection) ?? { generation: letter.generation, count: 0 };
    entry.count += 1;
    counts.set(letter.projection, entry);
  }
  for (const [projection, { generation, count }] of counts) {
    await tx.query(sql.typeAlias('void')`
      UPDATE projection_generations SET events_applied = events_applied - ${count}
      WHERE projection = ${projection} AND generation = ${generation}
    `);
  }
}

function trustOne(raw: RecordedEvent): Decoded {
  let envelope;
  try {
    envelope = trustStoredEvent(raw);
  } catch (error) {
    throw new ReplayDecodeError(raw, error instanceof Error ? error.message : String(error));
  }
  const event: ProjectedEvent = Object.assign(envelope, { position: raw.position, streamName: raw.streamName, recordedAt: raw.recordedAt });
  return { raw, event };
}

function decodeOne(raw: RecordedEvent): Decoded {
  try {
    const envelope = decodeEvent(raw);
    if (envelope === undefined) return { raw };
    // The envelope is a fresh object of this call: extend it rather than copy it (hot path).
    const event: ProjectedEvent = Object.assign(envelope, { position: raw.position, streamName: raw.streamName, recordedAt: raw.recordedAt });
    return { raw, event };
  } catch (error) {
    return { raw, decodeError: error instanceof Error ? error.message : String(error) };
  }
}

/** Index of the first event after `position` (events are in log order). */
function firstAfter(events: readonly RecordedEvent[], position: LogPosition): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const event = events[middle];
    if (event !== undefined && compareLogPositions(event.position, position) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
