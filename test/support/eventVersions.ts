import type { EventEnvelope } from '../../src/events/index.js';
import type { EventStore, StreamWrite } from '../../src/eventStore/eventStore.js';
import { renameField } from '../../src/events/upcasters.js';

/** The inverse of StockMovementRecorded's v2 upcaster. */
const backToSecondActor = renameField('witnessId', 'secondActorId');

/**
 * The event as the console wrote it before its type's first change (src/events/upcasters.ts):
 * what a log kept for years holds for its older history. Types that never changed are as they are.
 */
export function asFirstVersion(event: EventEnvelope): EventEnvelope {
  if (event.type === 'StockMovementRecorded') {
    return { ...event, schemaVersion: 1, data: backToSecondActor(event.data, event) } as unknown as EventEnvelope;
  }
  if (event.type === 'OrderDrafted') {
    const { lineCount: _, ...data } = event.data;
    return { ...event, schemaVersion: 1, data } as unknown as EventEnvelope;
  }
  return event;
}

/**
 * The store, as a console that changed its events after `firstVersionEvents` events would have
 * filled it: those in their first version (asFirstVersion), the rest as given. With `holdAfter`,
 * the writes after that many events are kept back until `appendHeld` (a log that grows later).
 */
export function consoleThatChanged(store: EventStore, options: { readonly firstVersionEvents: number; readonly holdAfter?: number }) {
  let seen = 0;
  const held: StreamWrite[] = [];
  const appendMany = async (writes: readonly StreamWrite[]) => {
    const now: StreamWrite[] = [];
    for (const write of writes) {
      const events = write.events.map((event) => (seen++ < options.firstVersionEvents ? asFirstVersion(event) : event));
      const versioned = { ...write, events };
      if (options.holdAfter !== undefined && (held.length > 0 || seen > options.holdAfter)) held.push(versioned);
      else now.push(versioned);
    }
    return now.length === 0 ? [] : store.appendMany(now);
  };
  const wrapped = new Proxy(store, {
    get: (target, property, receiver) => (property === 'appendMany' ? appendMany : (Reflect.get(target, property, receiver) as unknown)),
  });
  return {
    store: wrapped,
    /** Appends what was kept back, in its order. */
    appendHeld: async (): Promise<void> => {
      for (const write of held.splice(0)) await store.appendMany([write]);
    },
  };
}
