import {
  logStart,
  satisfiesExpectedRevision,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type RecordedEvent,
  type StreamWrite,
} from '../../src/eventStore/eventStore.js';

/**
 * An event store in memory for pure unit tests of writers (seed, console actions): appends with
 * expected-revision checks, all-or-nothing appendMany, stream reads and names. Reading the global
 * log and subscriptions are not offered: readers are tested against the real adapters.
 */
export function createMemoryEventStore(): EventStore & { readonly transactions: StreamWrite[][] } {
  const byStream = new Map<string, RecordedEvent[]>();
  const transactions: StreamWrite[][] = [];
  let position = 0n;

  const appendMany = async (writes: readonly StreamWrite[]): Promise<AppendResult[]> => {
    const pending = new Map<string, number>();
    for (const write of writes) {
      const current = pending.get(write.streamName) ?? (byStream.get(write.streamName)?.length ?? 0);
      const actual = current === 0 ? 'no_stream' : BigInt(current - 1);
      if (!satisfiesExpectedRevision(write.expectedRevision, actual)) throw new WrongExpectedRevisionError(write.streamName, write.expectedRevision, actual);
      pending.set(write.streamName, current + write.events.length);
    }
    transactions.push([...writes]);
    const recordedAt = new Date().toISOString();
    return writes.map((write) => {
      const stream = byStream.get(write.streamName) ?? [];
      byStream.set(write.streamName, stream);
      for (const event of write.events) {
        position += 1n;
        stream.push({
          position: { tx: BigInt(transactions.length), seq: position },
          streamName: write.streamName,
          streamRevision: BigInt(stream.length),
          eventId: event.eventId,
          type: event.type,
          schemaVersion: event.schemaVersion,
          tenantId: event.tenantId,
          occurredAt: event.occurredAt,
          recordedAt,
          data: JSON.parse(JSON.stringify(event.data)) as unknown,
        });
      }
      return { nextExpectedRevision: BigInt(stream.length - 1), position: { tx: BigInt(transactions.length), seq: position } };
    });
  };

  const unsupported = (): never => {
    throw new Error('the memory event store does not read the global log');
  };

  return {
    kind: 'postgres',
    transactions,
    append: async (streamName, events, expectedRevision) => {
      const [result] = await appendMany([{ streamName, events, expectedRevision }]);
      return result ?? { nextExpectedRevision: -1n, position: logStart };
    },
    appendMany,
    readStream: async (streamName) => [...(byStream.get(streamName) ?? [])],
    streamNames: async (prefix) => [...byStream.keys()].filter((name) => name.startsWith(prefix)).sort(),
    readAll: async () => unsupported(),
    subscribe: () => unsupported(),
    head: async () => unsupported(),
    close: async () => undefined,
  };
}
