import type { StreamWrite } from '../src/eventStore/eventStore.js';
import { decodeEvent, streams, type EventData, type EventEnvelope } from '../src/events/index.js';

/**
 * A deterministic stock-ledger history: box streams spread over a few tenants, each opened by
 * BoxRegistered and followed by StockMovementRecorded entries. Batch i is a pure function of
 * (seed, i) and of the earlier batches of its writer, so the same history can be produced twice
 * (once appended, once COPYed). Streams are partitioned by writer: concurrent writers never meet
 * on a stream, and each knows the exact revision it expects.
 */
export type SyntheticLogOptions = {
  readonly events: number;
  readonly batchSize: number;
  readonly streams: number;
  readonly streamsPerBatch: number;
  readonly writers: number;
  readonly seed: number;
};

export type SyntheticLog = {
  readonly batchCount: number;
  /** Batches must be asked for in increasing order per writer (batch % writers). */
  batch(index: number): StreamWrite[];
};

const tenantCount = 12;
const movementTypes = ['receive', 'consume', 'consume', 'consume', 'reserve', 'release', 'issue', 'adjust', 'transfer', 'return'] as const;
const baseMs = Date.parse('2024-01-01T00:00:00.000Z');

export function createSyntheticLog(options: SyntheticLogOptions): SyntheticLog {
  const { events, batchSize, streamsPerBatch, writers, seed } = options;
  const streamCount = Math.max(options.streams, writers * streamsPerBatch);
  const eventsPerStream = Math.max(1, Math.floor(batchSize / streamsPerBatch));
  const batchCount = Math.ceil(events / batchSize);
  const seedRandom = mulberry32(seed);
  const tenants = Array.from({ length: tenantCount }, () => uuidFrom(seedRandom));
  const revisions = new Int32Array(streamCount);

  const boxOf = (stream: number) => ({
    tenantId: tenants[stream % tenantCount] ?? 'tenant',
    boxId: `box-${stream.toString(36).padStart(5, '0')}`,
    catalogItemId: `item-${(stream % 640).toString().padStart(4, '0')}`,
    warehouseId: `wh-${stream % 9}`,
  });

  // Plain literals without spreads: this runs once per event inside the timed append loop.
  const eventAt = (stream: number, revision: number, random: () => number, atMs: number): EventEnvelope => {
    const box = boxOf(stream);
    const occurredAt = new Date(atMs).toISOString();
    const eventId = uuidFrom(random);
    if (revision === 0) {
      return {
        eventId,
        tenantId: box.tenantId,
        occurredAt,
        schemaVersion: 1,
        type: 'BoxRegistered',
        data: {
          boxId: box.boxId,
          code: `B-${stream}`,
          catalogItemId: box.catalogItemId,
          warehouseId: box.warehouseId,
          status: 'active',
          lot: `L${(stream * 7919) % 100_000}`,
          expiresOn: '2027-06-30',
          origin: { type: 'purchase', reference: `PO-${stream % 5000}` },
        },
      };
    }
    const type = movementTypes[Math.floor(random() * movementTypes.length)] ?? 'consume';
    const quantity = 1 + Math.floor(random() * 24);
    const data: EventData<'StockMovementRecorded'> = {
      movementId: uuidFrom(random),
      type,
      boxId: box.boxId,
      catalogItemId: box.catalogItemId,
      quantityDelta: type === 'consume' || type === 'issue' ? -quantity : type === 'reserve' || type === 'release' ? 0 : quantity,
      actorId: `member-${Math.floor(random() * 180)}`,
      correlationId: `corr-${revision}-${stream}`,
      occurredAt,
    };
    if (type === 'reserve' || type === 'release') data.reservedDelta = type === 'reserve' ? quantity : -quantity;
    if (type === 'transfer') {
      data.fromWarehouseId = box.warehouseId;
      data.toWarehouseId = `wh-${(stream + 1) % 9}`;
    }
    return { eventId, tenantId: box.tenantId, occurredAt, schemaVersion: 1, type: 'StockMovementRecorded', data };
  };

  return {
    batchCount,
    batch(index) {
      const random = mulberry32(seed ^ Math.imul(index + 1, 0x9e3779b1));
      const writer = index % writers;
      const partition = Math.floor((streamCount - writer + writers - 1) / writers);
      const size = Math.min(batchSize, events - index * batchSize);
      const picked = new Set<number>();
      while (picked.size < Math.min(streamsPerBatch, partition)) {
        picked.add(writer + writers * Math.floor(random() * partition));
      }
      const writes: StreamWrite[] = [];
      let remaining = size;
      let atMs = baseMs + index * 60_000;
      for (const stream of picked) {
        const count = Math.min(remaining, eventsPerStream);
        if (count <= 0) break;
        const first = revisions[stream] ?? 0;
        const batchEvents: EventEnvelope[] = [];
        for (let offset = 0; offset < count; offset += 1) {
          atMs += 250;
          batchEvents.push(eventAt(stream, first + offset, random, atMs));
        }
        revisions[stream] = first + count;
        remaining -= count;
        const box = boxOf(stream);
        writes.push({
          streamName: streams.box(box.tenantId, box.boxId),
          expectedRevision: first === 0 ? 'no_stream' : BigInt(first - 1),
          events: batchEvents,
        });
      }
      return writes;
    },
  };
}

/** Throws unless every event matches its catalogue schema: the benchmark appends real events. */
export function assertCatalogueEvents(writes: readonly StreamWrite[]): void {
  for (const write of writes) {
    for (const event of write.events) {
      if (decodeEvent(event) === undefined) throw new Error(`unknown event type ${event.type}`);
    }
  }
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** A version-4-shaped UUID from the generator, so that the history is reproducible. */
function uuidFrom(random: () => number): string {
  const a = word(random);
  const b = word(random);
  const c = word(random);
  const d = word(random);
  return (
    `${byteHex(a, 24)}${byteHex(a, 16)}${byteHex(a, 8)}${byteHex(a, 0)}-${byteHex(b, 24)}${byteHex(b, 16)}-` +
    `${byteHex((b & 0x0fff) | 0x4000, 8)}${byteHex(b, 0)}-${byteHex((c >>> 16 & 0x3fff) | 0x8000, 8)}${byteHex(c, 16)}-` +
    `${byteHex(c, 8)}${byteHex(c, 0)}${byteHex(d, 24)}${byteHex(d, 16)}${byteHex(d, 8)}${byteHex(d, 0)}`
  );
}

function word(random: () => number): number {
  return Math.floor(random() * 4294967296) >>> 0;
}

function byteHex(value: number, shift: number): string {
  return hex[(value >>> shift) & 0xff] ?? '00';
}
