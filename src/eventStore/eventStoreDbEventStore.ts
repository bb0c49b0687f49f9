import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  jsonEvent,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type Position,
  type ReadPosition,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { z } from 'zod';
import { streamPrefix, type EventEnvelope } from '../events/index.js';
import type { Logger } from '../platform/logger.js';
import {
  compareLogPositions,
  logStart,
  satisfiesExpectedRevision,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type LogHead,
  type LogPosition,
  type ReadAllResult,
  type RecordedEvent,
  type StreamWrite,
  type SubscribeOptions,
} from './eventStore.js';

/**
 * The event log in EventStoreDB / KurrentDB. Positions are { tx: commit, seq: prepare } of $all.
 *
 * Filtering: subscribe() filters $all on the server (stream-name prefix `supply.`). The 6.x
 * client's readAll() cannot send a filter (it always asks for none), so readAll(), head(),
 * streamNames() and the event count read $all page by page and keep the `supply.` streams here;
 * system and foreign events cost a read but are never returned.
 *
 * Costs: head().eventCount is counted by a scan of $all, incremental per store instance (the first
 * call reads the whole log, later ones only what was appended since). streamNames() scans $all
 * on every call: it serves the simulated console, not request paths.
 */
export type EventStoreDbEventStoreOptions = {
  /** esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover:// */
  readonly connectionString: string;
  readonly logger: Logger;
  readonly pageSize?: number;
};

const metadataSchema = z.object({ tenantId: z.string(), occurredAt: z.string(), schemaVersion: z.number().int() });

const defaultBatchSize = 1000;

export function createEventStoreDbEventStore(options: EventStoreDbEventStoreOptions): EventStore {
  const client = EventStoreDBClient.connectionString(clientConnectionString(options.connectionString));
  const pageSize = options.pageSize ?? 1000;
  const closing = new AbortController();
  let census: { scannedTo: Position | undefined; count: bigint } = { scannedTo: undefined, count: 0n };
  let censusRun: Promise<bigint> = Promise.resolve(0n);

  const append = async (write: StreamWrite): Promise<AppendResult> => {
    if (write.events.length === 0) return checkOnly(write);
    try {
      const result = await client.appendToStream(write.streamName, write.events.map(toEventData), {
        expectedRevision: toClientExpectedRevision(write.expectedRevision),
      });
      return {
        nextExpectedRevision: result.nextExpectedRevision,
        position: result.position ? toLogPosition(result.position) : logStart,
      };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(write.streamName, write.expectedRevision, error.actualVersion);
      }
      throw error;
    }
  };

  // The server's answer to an empty append differs by version; this check means the same everywhere.
  const checkOnly = async (write: StreamWrite): Promise<AppendResult> => {
    let actual: bigint | 'no_stream' = 'no_stream';
    try {
      for await (const resolved of client.readStream(write.streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
        if (resolved.event) actual = resolved.event.revision;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    if (!satisfiesExpectedRevision(write.expectedRevision, actual)) {
      throw new WrongExpectedRevisionError(write.streamName, write.expectedRevision, actual);
    }
    return { nextExpectedRevision: actual === 'no_stream' ? -1n : actual, position: logStart };
  };

  /** Pages through $all forwards after `after`, handing each `supply.` event to `visit` until it returns false. */
  const scanAll = async (after: Position | undefined, visit: (event: RecordedEvent, position: Position) => boolean): Promise<Position | undefined> => {
    let cursor: ReadPosition = after ?? START;
    let last = after;
    for (;;) {
      const page = client.readAll({ fromPosition: cursor, maxCount: pageSize, direction: FORWARDS });
      let read = 0;
      let stopped = false;
      try {
        for await (const resolved of page) {
          read += 1;
          const position = resolved.event?.position;
          // The read starts at `cursor` inclusively.
          if (!position || (last && comparePositions(position, last) <= 0)) continue;
          last = position;
          const event = toRecordedEvent(resolved);
          if (event && !visit(event, position)) {
            stopped = true;
            break;
          }
        }
      } finally {
        if (stopped) await page.cancel();
      }
      if (stopped || read < pageSize || !last) return last;
      cursor = last;
    }
  };

  const readAll = async (from: LogPosition, maxCount: number): Promise<ReadAllResult> => {
    if (!Number.isInteger(maxCount) || maxCount < 1) {
      throw new RangeError(`maxCount must be a positive integer, got ${maxCount}`);
    }
    const events: RecordedEvent[] = [];
    let atHead = true;
    await scanAll(isLogStart(from) ? undefined : toClientPosition(from), (event) => {
      if (events.length === maxCount) {
        atHead = false;
        return false;
      }
      events.push(event);
      return true;
    });
    return { events, next: events.at(-1)?.position ?? from, atHead };
  };

  const countEvents = (): Promise<bigint> => {
    censusRun = censusRun.then(async () => {
      let added = 0n;
      const scannedTo = await scanAll(census.scannedTo, () => {
        added += 1n;
        return true;
      });
      census = { scannedTo, count: census.count + added };
      return census.count;
    });
    return censusRun;
  };

  const head = async (): Promise<LogHead> => {
    const eventCount = await countEvents();
    let cursor: ReadPosition = END;
    for (;;) {
      let read = 0;
      let last: Position | undefined;
      for await (const resolved of client.readAll({ fromPosition: cursor, maxCount: pageSize, direction: BACKWARDS })) {
        read += 1;
        last = resolved.event?.position ?? last;
        const event = toRecordedEvent(resolved);
        if (event) return { position: event.position, eventCount, lastRecordedAt: event.recordedAt };
      }
      if (read < pageSize || !last) return { position: logStart, eventCount, lastRecordedAt: undefined };
      cursor = last;
    }
  };

  async function* subscription(subscribeOptions: SubscribeOptions): AsyncGenerator<readonly RecordedEvent[], void, undefined> {
    const signal = subscribeOptions.signal ? AbortSignal.any([subscribeOptions.signal, closing.signal]) : closing.signal;
    if (signal.aborted) return;
    const { from } = subscribeOptions;
    const batchSize = subscribeOptions.batchSize ?? defaultBatchSize;
    const stream = client.subscribeToAll({
      fromPosition: isLogStart(from) ? START : toClientPosition(from),
      filter: streamNameFilter({ prefixes: [streamPrefix] }),
    });
    try {
      for (;;) {
        const resolved = await nextAvailable(stream, batchSize, signal);
        if (resolved === undefined) return;
        const events = resolved
          .map(toRecordedEvent)
          .filter((event): event is RecordedEvent => event !== undefined && compareLogPositions(event.position, from) > 0);
        if (events.length > 0) yield events;
      }
    } finally {
      await stream.unsubscribe().catch(() => {});
    }
  }

  return {
    kind: 'eventstoredb',
    append: (streamName, events, expectedRevision) => append({ streamName, events, expectedRevision }),
    appendMany: async (writes) => {
      const results: AppendResult[] = [];
      for (const write of writes) results.push(await append(write));
      return results;
    },
    readStream: async (streamName) => {
      const events: RecordedEvent[] = [];
      try {
        for await (const resolved of client.readStream(streamName, { direction: FORWARDS, fromRevision: START })) {
          const event = toRecordedEvent(resolved);
          if (event) events.push(event);
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return [];
        throw error;
      }
      return events;
    },
    readAll,
    subscribe: (subscribeOptions) => subscription(subscribeOptions),
    head,
    streamNames: async (prefix) => {
      const names = new Set<string>();
      await scanAll(undefined, (event) => {
        if (event.streamName.startsWith(prefix)) names.add(event.streamName);
        return true;
      });
      return [...names].sort();
    },
    close: async () => {
      closing.abort();
      await client.dispose();
    },
  };
}

/** The 6.x client knows the esdb schemes only; KurrentDB's are the same protocol. */
function clientConnectionString(connectionString: string): string {
  return connectionString.replace(/^kurrentdb(\+discover)?:\/\//i, (_match, discover: string | undefined) => `esdb${discover ?? ''}://`);
}

function toClientExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      return expected;
  }
}

function toEventData(event: EventEnvelope) {
  return jsonEvent({
    id: event.eventId,
    type: event.type,
    data: event.data,
    metadata: { tenantId: event.tenantId, occurredAt: event.occurredAt, schemaVersion: event.schemaVersion },
  });
}

/** Our events only: other streams (system `$…`, other applications) and link events are skipped. */
function toRecordedEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const event = resolved.event;
  if (!event || !event.streamId.startsWith(streamPrefix)) return undefined;
  if (!event.isJson) {
    throw new Error(`event ${event.id} in ${event.streamId} is not JSON`);
  }
  const metadata = metadataSchema.safeParse(event.metadata);
  if (!metadata.success) {
    throw new Error(`event ${event.id} in ${event.streamId} lacks tenantId, occurredAt or schemaVersion in its metadata`);
  }
  const position = event.position ?? { commit: resolved.commitPosition ?? 0n, prepare: resolved.commitPosition ?? 0n };
  return {
    position: toLogPosition(position),
    streamName: event.streamId,
    streamRevision: event.revision,
    eventId: event.id,
    type: event.type,
    schemaVersion: metadata.data.schemaVersion,
    tenantId: metadata.data.tenantId,
    occurredAt: metadata.data.occurredAt,
    recordedAt: event.created.toISOString(),
    data: event.data,
  };
}

function toLogPosition(position: Position): LogPosition {
  return { tx: position.commit, seq: position.prepare };
}

function toClientPosition(position: LogPosition): Position {
  return { commit: position.tx, prepare: position.seq };
}

function comparePositions(a: Position, b: Position): number {
  return compareLogPositions(toLogPosition(a), toLogPosition(b));
}

function isLogStart(position: LogPosition): boolean {
  return compareLogPositions(position, logStart) === 0;
}

/**
 * Waits until the subscription has events and takes those buffered, up to `max`: catch-up comes
 * in large batches, live events as they arrive. Undefined once the subscription ends or aborts.
 */
async function nextAvailable(stream: AllStreamSubscription, max: number, signal: AbortSignal): Promise<AllStreamResolvedEvent[] | undefined> {
  for (;;) {
    if (signal.aborted) return undefined;
    const taken: AllStreamResolvedEvent[] = [];
    let item: AllStreamResolvedEvent | null = null;
    while (taken.length < max && (item = stream.read()) !== null) taken.push(item);
    if (taken.length > 0) return taken;
    if (stream.readableEnded || stream.destroyed) return undefined;
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        stream.off('readable', onReadable);
        stream.off('end', onReadable);
        stream.off('close', onReadable);
        stream.off('error', settle);
        signal.removeEventListener('abort', onReadable);
        if (error) reject(error);
        else resolve();
      };
      const onReadable = () => settle();
      stream.on('readable', onReadable);
      stream.on('end', onReadable);
      stream.on('close', onReadable);
      stream.on('error', settle);
      signal.addEventListener('abort', onReadable, { once: true });
    });
  }
}
