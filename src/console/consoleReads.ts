import type { EventStore, ExpectedRevision } from '../eventStore/eventStore.js';
import { decodeEvent, streamNamePrefix, type EventEnvelope, type StreamCategory } from '../events/index.js';

/** A stream as a console action sees it: its decoded events and the revision to append after. */
export type StreamSnapshot = {
  readonly streamName: string;
  readonly events: readonly EventEnvelope[];
  readonly revision: ExpectedRevision;
};

export async function readSnapshot(eventStore: EventStore, streamName: string): Promise<StreamSnapshot> {
  const recorded = await eventStore.readStream(streamName);
  const last = recorded[recorded.length - 1];
  return {
    streamName,
    events: recorded.map((event) => decodeEvent(event)).filter((event): event is EventEnvelope => event !== undefined),
    revision: last === undefined ? 'no_stream' : last.streamRevision,
  };
}

/** Streams read at once: enough to hide latency, few enough to leave the pool to others. */
const readConcurrency = 16;

/** Every entity stream of one category of a tenant (members, clinics, boxes…). */
export async function readCategory(eventStore: EventStore, category: StreamCategory, tenantId: string): Promise<StreamSnapshot[]> {
  const names = await eventStore.streamNames(streamNamePrefix(category, tenantId));
  const snapshots: StreamSnapshot[] = new Array<StreamSnapshot>(names.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const index = next;
      next += 1;
      const name = names[index];
      if (name !== undefined) snapshots[index] = await readSnapshot(eventStore, name);
    }
  };
  await Promise.all(Array.from({ length: Math.min(readConcurrency, names.length) }, worker));
  return snapshots;
}
