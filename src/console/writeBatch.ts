import type { ExpectedRevision, StreamWrite } from '../eventStore/eventStore.js';
import { newEvent, type EventData, type EventEnvelope, type EventType } from '../events/index.js';
import type { IdSource } from './consoleIds.js';

/** The events one console action appends, per stream, each after the revision it was decided on. */
export type WriteBatch = {
  add<T extends EventType>(streamName: string, revision: ExpectedRevision, type: T, data: EventData<T>): EventEnvelope;
  writes(): StreamWrite[];
};

export function createWriteBatch(tenantId: string, occurredAt: string, ids: IdSource): WriteBatch {
  const byStream = new Map<string, { revision: ExpectedRevision; events: EventEnvelope[] }>();
  return {
    add: (streamName, revision, type, data) => {
      const event = newEvent(type, data, { eventId: ids.eventId(), tenantId, occurredAt });
      const write = byStream.get(streamName);
      if (write === undefined) byStream.set(streamName, { revision, events: [event] });
      else write.events.push(event);
      return event;
    },
    writes: () => [...byStream.entries()].map(([streamName, { revision, events }]) => ({ streamName, expectedRevision: revision, events })),
  };
}
