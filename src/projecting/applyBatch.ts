import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { checkTrustedEvent, currentVersionOf, decodeEvent, eventSchemas, EventVersionError, type EventType, type KnownVersions } from '../events/index.js';
import { compareLogPositions, type EventStore, type LogPosition, type RecordedEvent } from '../eventStore/eventStore.js';
import type { Logger } from '../platform/logger.js';
import { sql } from '../platform/sql.js';
import { commitLocally, commitToStandbys } from '../platform/db.js';
import { advanceCheckpoints, advanced, tableResolver, type CheckpointAdvance, type Generation } from './generations.js';
import { applyFold, type ProjectedEvent, type Projection, type RebuildMemory } from './projection.js';
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
  /** The batch changed who may read (a projection that governs access handled events): the caller waits for the leased standbys once it has committed. */
  readonly accessChanged?: boolean;
  /** Projections that stopped before an event of a version newer than the reader knows (their checkpoints stay before it). */
  readonly held: readonly HeldEvent[];
};

/** Where a projection holds: the first event it handles whose schema version is newer than the reader knows. */
export type HeldEvent = {
  readonly projection: string;
  readonly position: LogPosition;
  readonly eventId: string;
  readonly eventType: string;
  readonly streamName: string;
  readonly schemaVersion: number;
  readonly knownVersion: number;
};

/**
 * A batch of the log with every event decoded (decoding is the costliest step in Node).
 * `projected[i]` is `events[i]` as projections read it: undefined where the strict decode failed
 * (the reason in `decodeErrors`) or does not know the type. On the trusted path it is the stored
 * event object itself (its fields are a superset of ProjectedEvent's), not a copy.
 */
export type DecodedBatch = {
  readonly events: readonly RecordedEvent[];
  readonly projected: readonly (ProjectedEvent | undefined)[];
  readonly decodeErrors: ReadonlyMap<number, string>;
  /** Events of a schema version newer than the reader knows, when it holds at them (decodeBatch's `holdAt`). */
  readonly newer?: ReadonlyMap<number, EventVersionError>;
  /** Each event's type as a small number (0: a type this code does not know), read once for every projection. */
  readonly typeCodes: Uint8Array;
};

/**
 * strict: every event through its zod schema (appends, live projectors, `replay --strict`).
 * trusted: the replay's fast path, type and schema version checked, the stored JSON trusted
 * (checkTrustedEvent); an event it cannot read stops the replay with its position.
 */
export type EventDecoding = 'strict' | 'trusted';

/** The trusted path met an event it cannot read without the strict decode. */
export class ReplayDecodeError extends Error {
  constructor(
    readonly event: Pick<RecordedEvent, 'position' | 'eventId' | 'type' | 'schemaVersion' | 'streamName'>,
    readonly reason: string,
  ) {
    super(
      `replay stopped at log position ${event.position.tx}/${event.position.seq} (event ${event.eventId}, ${event.type} ` +
        `v${event.schemaVersion} of ${event.streamName}): ${reason}`,
    );
    this.name = 'ReplayDecodeError';
  }
}

/**
 * Whether a replay may read the log lean (StreamAllOptions.lean: no stream name, revision or event
 * id): on the trusted path when no event is a suspect (suspects are known by their ids). The
 * events that stop a replay are named afterwards (namedStop).
 */
export function leanReading(decoding: EventDecoding, suspects: ReadonlySet<string> | undefined): boolean {
  return decoding === 'trusted' && (suspects === undefined || suspects.size === 0);
}

/**
 * A replay's stop (ReplayDecodeError, ReplayPoisonError) whose event came from a lean read, with
 * the event's id and stream looked up in the store by its position; any other error as it is.
 */
export async function namedStop(error: unknown, eventStore: Pick<EventStore, 'readAll'>): Promise<unknown> {
  const eventAt = async (position: LogPosition): Promise<RecordedEvent | undefined> => {
    // The first event after the position just before it (a sequence number is at least 1).
    if (position.seq < 1n) return undefined;
    const [event] = (await eventStore.readAll({ tx: position.tx, seq: position.seq - 1n }, 1)).events;
    return event !== undefined && compareLogPositions(event.position, position) === 0 ? event : undefined;
  };
  if (error instanceof ReplayDecodeError && error.event.eventId === '') {
    const found = await eventAt(error.event.position);
    return found === undefined ? error : new ReplayDecodeError({ ...error.event, eventId: found.eventId, streamName: found.streamName }, error.reason);
  }
  if (error instanceof ReplayPoisonError && error.deadLetter.eventId === '') {
    const found = await eventAt(error.deadLetter.position);
    return found === undefined ? error : new ReplayPoisonError({ ...error.deadLetter, eventId: found.eventId, streamName: found.streamName });
  }
  return error;
}

/**
 * Decodes a batch ahead of applying it, so that a reader can decode the next batch while the
 * database writes the current one. `dataOf` (trusted only): the types whose data the read carried
 * (the types the replay's projections handle); the others' data was left out, and only their type
 * and schema version are checked. `holdAt` (strict only, the live projector): the versions the
 * reader knows; an event of a newer one is noted in `newer` (its projections hold there) rather
 * than as a decode error (a poison event).
 */
export function decodeBatch(
  events: readonly RecordedEvent[],
  decoding: EventDecoding = 'strict',
  suspects: ReadonlySet<string> = noSuspects,
  dataOf?: ReadonlySet<string>,
  holdAt?: KnownVersions,
): DecodedBatch {
  const typeCodes = new Uint8Array(events.length);
  for (let index = 0; index < events.length; index += 1) typeCodes[index] = typeCodeOf.get((events[index] as RecordedEvent).type) ?? 0;
  const decodeErrors = new Map<number, string>();
  if (decoding === 'trusted' && suspects.size === 0) {
    // Checked: each stored event is its own projected event, unless an older version was upcast.
    let upcast: ProjectedEvent[] | undefined;
    for (let index = 0; index < events.length; index += 1) {
      const raw = events[index] as RecordedEvent;
      const event = trustOne(raw, dataOf === undefined || dataOf.has(raw.type));
      if (event !== (raw as unknown)) (upcast ??= [...(events as readonly RecordedEvent[] as readonly ProjectedEvent[])])[index] = event;
    }
    return { events, projected: upcast ?? (events as readonly RecordedEvent[] as readonly ProjectedEvent[]), decodeErrors, typeCodes };
  }
  const projected = new Array<ProjectedEvent | undefined>(events.length);
  const newer = new Map<number, EventVersionError>();
  for (let index = 0; index < events.length; index += 1) {
    const raw = events[index] as RecordedEvent;
    const dataRead = dataOf === undefined || dataOf.has(raw.type);
    // An event a projector already dead-lettered is known not to be what it claims: decode it
    // strictly (unless its data was not read: then no projection of the replay handles it).
    if (decoding === 'trusted' && (!suspects.has(raw.eventId) || !dataRead)) {
      projected[index] = trustOne(raw, dataRead);
      continue;
    }
    try {
      projected[index] = decodeOne(raw, holdAt);
    } catch (error) {
      if (holdAt !== undefined && error instanceof EventVersionError) newer.set(index, error);
      else decodeErrors.set(index, error instanceof Error ? error.message : String(error));
    }
  }
  return { events, projected, decodeErrors, typeCodes, newer };
}

/**
 * The event types whose data a reader of the log for `targets` needs: the types they handle (a
 * projection is given only those), so the log stream leaves the others' data out. Undefined (all
 * data) for the strict decode, which decodes every event, and when they handle every type.
 */
export function dataReadBy(targets: readonly BatchTarget[], decoding: EventDecoding): ReadonlySet<string> | undefined {
  if (decoding === 'strict') return undefined;
  const types = new Set<string>(targets.flatMap((target) => target.projection.handles));
  return [...typeCodeOf.keys()].every((type) => types.has(type)) ? undefined : types;
}

/** Event types as the numbers of DecodedBatch.typeCodes, from 1. */
const typeCodeOf: ReadonlyMap<string, number> = new Map(Object.keys(eventSchemas).map((type, index) => [type, index + 1]));
if (typeCodeOf.size > 255) throw new Error('more event types than a type code holds');

/** A projection's handled types as a table by type code (cached: a projection's `handles` does not change). */
const handledCodes = new WeakMap<readonly EventType[], Uint8Array>();
function handledCodesOf(projection: Projection): Uint8Array {
  let codes = handledCodes.get(projection.handles);
  if (codes === undefined) {
    codes = new Uint8Array(256);
    for (const type of projection.handles) {
      const code = typeCodeOf.get(type);
      if (code !== undefined) codes[code] = 1;
    }
    handledCodes.set(projection.handles, codes);
  }
  return codes;
}

/** Indexes of the batch's events from `start` on that the projection handles. */
function handledIndexes(typeCodes: Uint8Array, projection: Projection, start: number): number[] {
  const handles = handledCodesOf(projection);
  const indexes: number[] = [];
  for (let index = start; index < typeCodes.length; index += 1) if (handles[typeCodes[index] as number] === 1) indexes.push(index);
  return indexes;
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
  const decoded = 'projected' in batch ? batch : decodeBatch(batch);
  const { events } = decoded;
  const last = events.at(-1);
  if (last === undefined) return { targets, applied: new Map(), deadLetters: [], held: [] };

  const plans = targets.map((target) => planTarget(target, decoded));

  await advanceCheckpoints(
    tx,
    plans.flatMap((plan) => (plan.advance ? [plan.advance] : [])),
  );

  // A suspension or reactivation is applied on the serving standbys before its commit returns; any
  // other batch (read models, rebuildable from the log) does not wait for standbys at all, so that
  // a standby going down does not hold the projector up.
  const accessChanged = plans.some(({ target, handled }) => target.projection.governsAccess === true && handled.length > 0);
  if (mode === 'live') {
    if (accessChanged) await commitToStandbys(tx);
    else await commitLocally(tx);
  }

  const deadLetters: DeadLetter[] = [];
  const applied = new Map<string, number>();
  for (const { target, handled } of plans) {
    if (handled.length === 0) continue;
    const letters = await applyToTarget(tx, target, decoded, handled, mode, logger);
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
    accessChanged,
    held: plans.flatMap((plan) => (plan.held === undefined ? [] : [plan.held])),
  };
}

/**
 * What one batch means for one target: the events it handles (indexes in the batch), how far its
 * checkpoint moves, and where it holds (an event it handles of a version newer than the reader knows).
 */
export type TargetPlan = {
  readonly target: BatchTarget;
  readonly handled: readonly number[];
  readonly advance: CheckpointAdvance | undefined;
  readonly held?: HeldEvent;
};

/**
 * The events of `batch` after the target's checkpoint that its projection handles, and its
 * checkpoint's advance: to the end of the batch, or to the event before the first it handles of a
 * newer version than the reader knows (batch.newer), where it holds.
 */
export function planTarget(target: BatchTarget, batch: DecodedBatch): TargetPlan {
  const start = firstAfter(batch.events, target.generation.checkpoint);
  const all = handledIndexes(batch.typeCodes, target.projection, start);
  const stop = batch.newer === undefined || batch.newer.size === 0 ? undefined : all.find((index) => batch.newer?.has(index) === true);
  const events = stop === undefined ? batch.events : batch.events.slice(0, stop);
  const handled = stop === undefined ? all : all.filter((index) => index < stop);
  const last = events.at(-1);
  const advance: CheckpointAdvance | undefined =
    start >= events.length || last === undefined
      ? undefined
      : {
          generation: target.generation,
          to: last.position,
          seen: events.length - start,
          applied: handled.length,
          lastRecordedAt: last.recordedAt,
        };
  if (stop === undefined) return { target, handled, advance };
  const raw = batch.events[stop] as RecordedEvent;
  const error = batch.newer?.get(stop) as EventVersionError;
  const held: HeldEvent = {
    projection: target.projection.name,
    position: raw.position,
    eventId: raw.eventId,
    eventType: raw.type,
    streamName: raw.streamName,
    schemaVersion: error.version,
    knownVersion: error.known,
  };
  return { target, handled, advance, held };
}

async function applyToTarget(
  tx: DatabaseTransactionConnection,
  target: BatchTarget,
  batch: DecodedBatch,
  handled: readonly number[],
  mode: BatchMode,
  logger: Logger,
): Promise<DeadLetter[]> {
  const table = tableResolver(target.generation.schemaName);
  const { rebuild } = target;
  const apply = async (events: readonly ProjectedEvent[]) => {
    try {
      await tx.transaction((db) => applyFold(target.projection.fold)(events, { db, table, rebuild }));
    } catch (error) {
      // The savepoint rolled back what the memory may already hold.
      rebuild?.forget();
      throw error;
    }
  };
  const events = handledEvents(batch, handled);
  if (events !== undefined) {
    try {
      await apply(events);
      return [];
    } catch (error) {
      if (isTransientDatabaseError(error)) throw error;
      logger.warn({ projection: target.projection.name, err: error }, 'batch could not be applied; isolating the event at fault');
    }
  }
  const letters: DeadLetter[] = [];
  for (const index of handled) {
    const raw = batch.events[index] as RecordedEvent;
    const event = batch.projected[index];
    let failure = batch.decodeErrors.get(index);
    if (event) {
      try {
        await apply([event]);
      } catch (error) {
        if (isTransientDatabaseError(error)) throw error;
        failure = error instanceof Error ? error.message : String(error);
      }
    }
    if (failure === undefined) continue;
    const letter: DeadLetter = {
      projection: target.projection.name,
      generation: target.generation.generation,
      position: raw.position,
      eventId: raw.eventId,
      eventType: raw.type,
      tenantId: raw.tenantId,
      streamName: raw.streamName,
      error: failure,
    };
    if (mode === 'replay') throw new ReplayPoisonError(letter);
    logger.error({ ...letter, position: `${letter.position.tx}/${letter.position.seq}` }, 'event dead-lettered: the projection skips it');
    letters.push(letter);
  }
  return letters;
}

/** The handled events in order, or undefined when one of them did not decode. */
export function handledEvents(batch: DecodedBatch, handled: readonly number[]): readonly ProjectedEvent[] | undefined {
  const { projected } = batch;
  // Every event of the batch: the batch's own array.
  if (handled.length === projected.length && batch.decodeErrors.size === 0 && !projected.includes(undefined)) return projected as readonly ProjectedEvent[];
  const events = new Array<ProjectedEvent>(handled.length);
  for (let at = 0; at < handled.length; at += 1) {
    const event = projected[handled[at] as number];
    if (event === undefined) return undefined;
    events[at] = event;
  }
  return events;
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

/**
 * The stored event itself as the projected event once the trusted read has checked it; an older
 * version's is a copy with its data upcast and, as decodeEvent's envelope, the current version.
 */
function trustOne(raw: RecordedEvent, dataRead: boolean): ProjectedEvent {
  let data: unknown;
  try {
    data = checkTrustedEvent(raw, dataRead);
  } catch (error) {
    throw new ReplayDecodeError(raw, error instanceof Error ? error.message : String(error));
  }
  // checkTrustedEvent refused an unknown type.
  return (data === raw.data ? raw : { ...raw, schemaVersion: currentVersionOf(raw.type as EventType), data }) as unknown as ProjectedEvent;
}

/** Undefined for a type this code does not know; throws when the event breaks its schema. */
function decodeOne(raw: RecordedEvent, knownVersion?: KnownVersions): ProjectedEvent | undefined {
  const envelope = decodeEvent(raw, knownVersion);
  if (envelope === undefined) return undefined;
  // The envelope is a fresh object of this call: extend it rather than copy it.
  return Object.assign(envelope, { position: raw.position, streamName: raw.streamName, recordedAt: raw.recordedAt });
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
