import { z } from 'zod';
import { catalogEvents } from './catalog.js';
import { fulfillmentEvents } from './fulfillments.js';
import { locationEvents } from './locations.js';
import { orderEvents } from './orders.js';
import { id, isoTimestamp } from './primitives.js';
import { stockEvents } from './stock.js';
import { tenancyEvents } from './tenancy.js';
import { upcasters } from './upcasters.js';

/** Every event type the service understands, with the zod schema of its data. */
export const eventSchemas = {
  ...tenancyEvents,
  ...locationEvents,
  ...catalogEvents,
  ...stockEvents,
  ...orderEvents,
  ...fulfillmentEvents,
} as const;

export type EventType = keyof typeof eventSchemas;
export type EventData<T extends EventType> = z.infer<(typeof eventSchemas)[T]>;

/** A domain event: its type and the data its schema describes. */
export type DomainEvent = { [T in EventType]: { readonly type: T; readonly data: EventData<T> } }[EventType];
export type DomainEventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/**
 * The schema version of a type's events as the console writes them today (its schema above): one
 * more than the changes in upcasters.ts. Older versions are upcast on read; a newer one was written
 * by a newer console than this code knows (EventVersionError).
 */
export function currentVersionOf(type: EventType): number {
  return 1 + (upcasters[type]?.length ?? 0);
}

/** The newest schema version of each type a reader reads: this code's (currentVersionOf), or an older release's. */
export type KnownVersions = (type: EventType) => number;

/**
 * What every event carries besides its data: tenant (workspace) id, event id, when it occurred and
 * the schema version of its data.
 */
export const envelopeSchema = z
  .object({
    eventId: z.string().uuid(),
    tenantId: id,
    occurredAt: isoTimestamp,
    schemaVersion: z.number().int().positive(),
  })
  .strict();

export type Envelope = z.infer<typeof envelopeSchema>;
export type EventEnvelope<E extends DomainEvent = DomainEvent> = Envelope & E;

export function isKnownEventType(type: string): type is EventType {
  return Object.hasOwn(eventSchemas, type);
}

export class EventDecodeError extends Error {
  constructor(
    readonly eventId: string,
    readonly eventType: string,
    reason: string,
  ) {
    super(`event ${eventId} (${eventType}) does not match its schema: ${reason}`);
    this.name = 'EventDecodeError';
  }
}

/** An event of a schema version newer than this code knows: written by a newer console. */
export class EventVersionError extends EventDecodeError {
  constructor(
    eventId: string,
    eventType: string,
    readonly version: number,
    readonly known: number,
  ) {
    super(eventId, eventType, `schema version ${version} is newer than ${known}, the newest this code knows`);
    this.name = 'EventVersionError';
  }
}

type RawEvent = {
  readonly eventId: string;
  readonly type: string;
  readonly tenantId: string;
  readonly occurredAt: string;
  readonly schemaVersion: number;
  readonly data: unknown;
};

/** The stored event's envelope around its data in the current version, once decoded. */
function envelopeOf(type: EventType, raw: RawEvent, data: unknown): EventEnvelope {
  return {
    eventId: raw.eventId,
    tenantId: raw.tenantId,
    occurredAt: raw.occurredAt,
    schemaVersion: currentVersionOf(type),
    type,
    data,
  } as EventEnvelope;
}

/**
 * The event's data in the current version of its type: upcast through each change since the
 * version it was written in (the data itself when it is current). Throws EventVersionError for a
 * version newer than the reader knows (`knownVersion`: this code's, or an older release's as the
 * projector may be told to read), and EventDecodeError for one below 1. Data that is not an
 * object is left as it is, for the schema (or the trusted read) to refuse.
 */
export function upcastData(type: EventType, raw: RawEvent, knownVersion: KnownVersions = currentVersionOf): unknown {
  const known = knownVersion(type);
  if (raw.schemaVersion > known) throw new EventVersionError(raw.eventId, type, raw.schemaVersion, known);
  if (raw.schemaVersion < 1) throw new EventDecodeError(raw.eventId, type, `schema version ${raw.schemaVersion} is not a version`);
  if (raw.schemaVersion === currentVersionOf(type) || typeof raw.data !== 'object' || raw.data === null || Array.isArray(raw.data)) return raw.data;
  let data = raw.data as Readonly<Record<string, unknown>>;
  for (const upcast of (upcasters[type] ?? []).slice(raw.schemaVersion - 1)) data = upcast(data, raw);
  return data;
}

/**
 * Turns a stored event into a typed one, in the current version of its type (upcast when older).
 * Unknown event types give `undefined` (readers skip them); a known type whose data breaks its
 * schema throws an EventDecodeError: that is a poison event, never something to drop silently. A
 * schema version newer than this code knows throws EventVersionError (valid data this code cannot
 * read yet: projectors hold at it rather than dead-letter it).
 */
export function decodeEvent(raw: RawEvent, knownVersion: KnownVersions = currentVersionOf): EventEnvelope | undefined {
  if (!isKnownEventType(raw.type)) {
    return undefined;
  }
  const type = raw.type;
  const parsed = eventSchemas[type].safeParse(upcastData(type, raw, knownVersion));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new EventDecodeError(raw.eventId, raw.type, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return envelopeOf(type, raw, parsed.data);
}

/**
 * The cheap read of a stored event, for replays: every event was checked against its schema when
 * it was appended (newEvent, the append path), and the schemas neither transform nor default
 * anything, so the stored JSON is what the strict decode would return, and a replay hands the
 * stored event on as the event itself (or, for an older version, with its data upcast). Only the
 * type, the schema version and that the data is an object are checked; anything else throws an
 * EventDecodeError, unknown types included (a replay must never skip an event silently), and a
 * newer version EventVersionError. `dataRead` false: the reader left this event's data out (no
 * projection it feeds handles the type, as the strict path ignores such an event's data), and only
 * type and schema version are checked. Returns the data in the current version. decodeEvent stays
 * the strict path.
 */
export function checkTrustedEvent(raw: RawEvent, dataRead = true): unknown {
  if (!isKnownEventType(raw.type)) {
    throw new EventDecodeError(raw.eventId, raw.type, 'unknown event type');
  }
  // Checks the version first; data that is not an object (or was left out) it hands back as it is.
  const data = upcastData(raw.type, raw);
  // A reader that left this type's data out of its read (EventStore.streamAll's dataOf) reads none of it.
  if (!dataRead) return data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new EventDecodeError(raw.eventId, raw.type, '(root): the data is not a JSON object');
  }
  return data;
}

/** Builds an event for appending, checking its data against the catalogue first. */
export function newEvent<T extends EventType>(
  type: T,
  data: EventData<T>,
  envelope: Omit<Envelope, 'schemaVersion'>,
): EventEnvelope<DomainEventOf<T>> {
  const parsed = eventSchemas[type].parse(data);
  return { ...envelope, schemaVersion: currentVersionOf(type), type, data: parsed } as EventEnvelope<DomainEventOf<T>>;
}
