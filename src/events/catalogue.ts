import { z } from 'zod';
import { catalogEvents } from './catalog.js';
import { fulfillmentEvents } from './fulfillments.js';
import { locationEvents } from './locations.js';
import { orderEvents } from './orders.js';
import { id, isoTimestamp } from './primitives.js';
import { stockEvents } from './stock.js';
import { tenancyEvents } from './tenancy.js';

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

/** The schema version written for each type today. Older versions are upcast on read. */
export const currentSchemaVersion = 1;

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

type RawEvent = {
  readonly eventId: string;
  readonly type: string;
  readonly tenantId: string;
  readonly occurredAt: string;
  readonly schemaVersion: number;
  readonly data: unknown;
};

/** The stored event's envelope around its data, once the data has been decoded or trusted. */
function envelopeOf(raw: RawEvent, data: unknown): EventEnvelope {
  return {
    eventId: raw.eventId,
    tenantId: raw.tenantId,
    occurredAt: raw.occurredAt,
    schemaVersion: raw.schemaVersion,
    type: raw.type,
    data,
  } as EventEnvelope;
}

/**
 * Turns a stored event into a typed one. Unknown event types give `undefined` (readers skip them);
 * a known type whose data breaks its schema, or a schema version newer than this code knows,
 * throws an EventDecodeError: that is a poison event, never something to drop silently.
 */
export function decodeEvent(raw: RawEvent): EventEnvelope | undefined {
  if (!isKnownEventType(raw.type)) {
    return undefined;
  }
  if (raw.schemaVersion > currentSchemaVersion) {
    throw new EventDecodeError(raw.eventId, raw.type, `schema version ${raw.schemaVersion} is newer than ${currentSchemaVersion}`);
  }
  const parsed = eventSchemas[raw.type].safeParse(raw.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new EventDecodeError(raw.eventId, raw.type, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return envelopeOf(raw, parsed.data);
}

/**
 * The cheap read of a stored event, for replays: every event was checked against its schema when
 * it was appended (newEvent, the append path), and the schemas neither transform nor default
 * anything, so the stored JSON is what the strict decode would return, and a replay hands the
 * stored event on as the event itself. Only the type, the schema version and that the data is an
 * object are checked; anything else throws an EventDecodeError, unknown types included (a replay
 * must never skip an event silently). `dataRead` false: the reader left this event's data out (no
 * projection it feeds handles the type, as the strict path ignores such an event's data), and only
 * type and schema version are checked. decodeEvent stays the strict path.
 */
export function checkTrustedEvent(raw: RawEvent, dataRead = true): void {
  if (!isKnownEventType(raw.type)) {
    throw new EventDecodeError(raw.eventId, raw.type, 'unknown event type');
  }
  if (raw.schemaVersion !== currentSchemaVersion) {
    throw new EventDecodeError(raw.eventId, raw.type, `schema version ${raw.schemaVersion} is not ${currentSchemaVersion}, the version this code reads without decoding`);
  }
  // A reader that left this type's data out of its read (EventStore.streamAll's dataOf) reads none of it.
  if (!dataRead) return;
  if (typeof raw.data !== 'object' || raw.data === null || Array.isArray(raw.data)) {
    throw new EventDecodeError(raw.eventId, raw.type, '(root): the data is not a JSON object');
  }
}

/** Builds an event for appending, checking its data against the catalogue first. */
export function newEvent<T extends EventType>(
  type: T,
  data: EventData<T>,
  envelope: Omit<Envelope, 'schemaVersion'>,
): EventEnvelope<DomainEventOf<T>> {
  const parsed = eventSchemas[type].parse(data);
  return { ...envelope, schemaVersion: currentSchemaVersion, type, data: parsed } as EventEnvelope<DomainEventOf<T>>;
}
