import type { StreamWrite } from '../../eventStore/eventStore.js';
import { createIsoFormatter } from './isoFormatter.js';
import { currentVersionOf, type DomainEventOf, type EventData, type EventEnvelope, type EventType } from '../../events/index.js';

/**
 * Collects the events that the running task emits and hands them out as stream writes with exact
 * expected revisions: `no_stream` for a stream's first write, then the revision of its last event.
 * Consecutive events of one stream become one write.
 */
export type EventSink = {
  emit<T extends EventType>(event: { streamName: string; type: T; data: EventData<T>; tenantId: string; eventId: string; atMs: number }): void;
  /** The writes emitted since the last drain, in emission order. */
  drain(): StreamWrite[];
};

type Pending = { readonly streamName: string; readonly event: EventEnvelope };

export function createEventSink(): EventSink {
  // Number of events per stream so far; the next write expects count - 1 (or no_stream at 0).
  const eventCounts = new Map<string, number>();
  let pending: Pending[] = [];
  let lastMs = Number.NEGATIVE_INFINITY;
  const format = createIsoFormatter();

  // Never earlier than the event before it: the log is read in occurredAt order by people.
  const isoAt = (atMs: number): string => {
    lastMs = Math.max(atMs, lastMs);
    return format(lastMs);
  };

  return {
    emit: ({ streamName, type, data, tenantId, eventId, atMs }) => {
      // Not newEvent: its schema check costs more than the rest of the simulation per event, and a
      // large history has a million of them. The data is typed by the catalogue here, and the tests
      // decode every event of generated histories against the schemas (refinements included).
      const event = { eventId, tenantId, occurredAt: isoAt(atMs), schemaVersion: currentVersionOf(type), type, data } as EventEnvelope<DomainEventOf<typeof type>>;
      pending.push({ streamName, event });
    },
    drain: () => {
      const writes: StreamWrite[] = [];
      let current: { streamName: string; events: EventEnvelope[] } | undefined;
      const flush = (): void => {
        if (current === undefined) return;
        const count = eventCounts.get(current.streamName) ?? 0;
        writes.push({
          streamName: current.streamName,
          expectedRevision: count === 0 ? 'no_stream' : BigInt(count - 1),
          events: current.events,
        });
        eventCounts.set(current.streamName, count + current.events.length);
        current = undefined;
      };
      for (const { streamName, event } of pending) {
        if (current?.streamName !== streamName) {
          flush();
          current = { streamName, events: [] };
        }
        current.events.push(event);
      }
      flush();
      pending = [];
      return writes;
    },
  };
}
