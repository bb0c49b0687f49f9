import { z } from 'zod';
import { fulfillmentStatus, type EventData } from '../../src/events/index.js';
import type { LogPosition } from '../../src/eventStore/eventStore.js';
import { sql } from '../../src/platform/sql.js';
import {
  expectRowCount,
  ProjectionInvariantError,
  type FoldContext,
  type Folding,
  type ProjectedEvent,
  type Projection,
  type ProjectionContext,
  type TableDefinition,
} from '../../src/projecting/projection.js';
import { rowKey } from '../../src/projecting/rowChanges.js';
import { deliveryExceptionResponse, type DeliveryExceptionResponse, type FulfillmentStatus } from './schema.js';
import { loadLastCreationSequences } from '../shared/creationSequence.js';
import { untrackedOrders } from '../shared/touchedOrders.js';
import { outputOnlyColumns } from '../shared/outputOnlyColumns.js';

type DispatchedFulfillment = {
  creationSeq: bigint;
  fulfillmentId: string;
  sourceWarehouseId: string;
  destinationWarehouseId: string;
  dispatchedBy: string;
  carrier: string | null;
  trackingCode: string | null;
  boxIds: readonly string[];
  dispatchedAt: string;
};

/** What the events after the dispatch change, written back once per batch. */
type FulfillmentProgress = {
  status: FulfillmentStatus;
  exceptions: DeliveryExceptionResponse[];
  updatedAt: string;
  /** JSON set by this batch; null keeps what the row has. */
  delivery: string | null;
  receipt: string | null;
  closure: string | null;
  /** Number of the last custody movement recorded. */
  lastMovementNo: number;
  /** Log position of the last event that changed the record (the change feed's order). */
  changed: LogPosition;
};

type TrackedFulfillment = {
  readonly tenantId: string;
  readonly orderId: string;
  /** Set when dispatched in this batch: the row is inserted rather than updated. */
  readonly dispatched: DispatchedFulfillment | undefined;
  progress: FulfillmentProgress;
};

type CustodyMovement = {
  tenantId: string;
  orderId: string;
  movementNo: number;
  custodyMovementId: string;
  type: string;
  fromActorId: string;
  toActorId: string;
  location: string | null;
  occurredAt: string;
};

const tables: readonly TableDefinition[] = [
  {
    name: 'fulfillments',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('fulfillments')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          creation_seq bigint NOT NULL,
          fulfillment_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          source_warehouse_id text COLLATE "C" NOT NULL,
          destination_warehouse_id text COLLATE "C" NOT NULL,
          dispatched_by text COLLATE "C" NOT NULL,
          carrier text,
          tracking_code text,
          box_ids text[] COLLATE "C" NOT NULL,
          dispatched_at timestamptz NOT NULL,
          delivery jsonb,
          receipt jsonb,
          closure jsonb,
          exceptions jsonb NOT NULL,
          updated_at timestamptz NOT NULL,
          -- Log position of the event that last changed the record: the change feed pages by it.
          changed_tx bigint NOT NULL,
          changed_seq bigint NOT NULL,
          PRIMARY KEY (tenant_id, order_id)
        )
      `,
      sql.typeAlias('void')`CREATE UNIQUE INDEX ON ${table('fulfillments')} (tenant_id, creation_seq)`,
      sql.typeAlias('void')`CREATE INDEX ON ${table('fulfillments')} (tenant_id, status, creation_seq)`,
      outputOnlyColumns(table('fulfillments'), ['carrier', 'tracking_code', 'box_ids', 'delivery', 'receipt', 'closure', 'exceptions']),
    ],
    // Only the change feed reads it (the projection writes by primary key).
    deferredIndexes: (table) => [sql.typeAlias('void')`CREATE INDEX ON ${table('fulfillments')} (tenant_id, changed_tx, changed_seq, order_id)`],
  },
  {
    name: 'fulfillment_custody',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('fulfillment_custody')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          movement_no integer NOT NULL,
          custody_movement_id text COLLATE "C" NOT NULL,
          type text NOT NULL,
          from_actor_id text COLLATE "C" NOT NULL,
          to_actor_id text COLLATE "C" NOT NULL,
          location text,
          occurred_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, order_id, movement_no)
        )
      `,
    ],
  },
];

/** Fulfillments as a fold: those the events touch, read once, changed in memory, written once with their custody movements. */
const fulfillmentsFolding: Folding = {
  begin: async (context) => {
    const tracked = new Map<string, TrackedFulfillment>();
    const lastSeqByTenant = new Map<string, bigint>();
    const movements: CustodyMovement[] = [];
    return {
      fold: async (events) => {
        await loadTouchedFulfillments(events, tracked, context);
        await loadLastCreationSeqs(events, lastSeqByTenant, context);
        for (const event of events) foldEvent(event, tracked, lastSeqByTenant, movements);
      },
      write: (writeContext) => writeFulfillments([...tracked.values()], movements, writeContext),
    };
  },
};

/** Delivery records keyed by order: status, chain of custody, delivery, receipt, exceptions and closure. */
export const fulfillmentsProjection: Projection = {
  name: 'fulfillments',
  // 2: changed_tx, changed_seq (the change feed).
  version: 2,
  tables,
  handles: [
    'FulfillmentDispatched',
    'CustodyTransferred',
    'DeliveryExceptionRaised',
    'DeliveryExceptionResolved',
    'FulfillmentDelivered',
    'FulfillmentReceived',
    'FulfillmentClosed',
  ],
  fold: fulfillmentsFolding,
};

const existingFulfillmentRow = z.object({
  tenantId: z.string(),
  orderId: z.string(),
  status: fulfillmentStatus,
  exceptions: z.array(deliveryExceptionResponse),
  updatedAt: z.string(),
  lastMovementNo: z.number().int(),
  changedTx: z.bigint(),
  changedSeq: z.bigint(),
});

/**
 * Status, exceptions and last custody movement of every fulfillment the events touch that exists
 * already and is not tracked yet (the fold holds those it read or dispatched), in one query, into `tracked`.
 */
async function loadTouchedFulfillments(events: readonly ProjectedEvent[], tracked: Map<string, TrackedFulfillment>, { db, table }: FoldContext): Promise<void> {
  const keys = untrackedOrders(events, tracked);
  if (keys.length === 0) return;
  const rows = await db.any(sql.type(existingFulfillmentRow)`
    SELECT f.tenant_id AS "tenantId", f.order_id AS "orderId", f.status, f.exceptions, f.updated_at AS "updatedAt",
      f.changed_tx AS "changedTx", f.changed_seq AS "changedSeq",
      (
        SELECT coalesce(max(c.movement_no), 0)
        FROM ${table('fulfillment_custody')} AS c
        WHERE c.tenant_id = f.tenant_id AND c.order_id = f.order_id
      ) AS "lastMovementNo"
    FROM ${table('fulfillments')} AS f
    WHERE (f.tenant_id, f.order_id) IN (SELECT * FROM ${sql.unnest(keys, ['text', 'text'])})
  `);
  for (const row of rows) {
    tracked.set(rowKey(row.tenantId, row.orderId), {
      tenantId: row.tenantId,
      orderId: row.orderId,
      dispatched: undefined,
      progress: {
        status: row.status,
        exceptions: row.exceptions,
        updatedAt: row.updatedAt,
        delivery: null,
        receipt: null,
        closure: null,
        lastMovementNo: row.lastMovementNo,
        changed: { tx: row.changedTx, seq: row.changedSeq },
      },
    });
  }
}

/** The highest creation sequence of each tenant that dispatches in the events, unless the fold knows it already. */
async function loadLastCreationSeqs(events: readonly ProjectedEvent[], known: Map<string, bigint>, { db, table }: FoldContext): Promise<void> {
  const tenants = events.flatMap((e) => (e.type === 'FulfillmentDispatched' ? [e.tenantId] : []));
  await loadLastCreationSequences(db, table('fulfillments'), tenants, known);
}

function foldEvent(
  event: ProjectedEvent,
  tracked: Map<string, TrackedFulfillment>,
  lastSeqByTenant: Map<string, bigint>,
  movements: CustodyMovement[],
): void {
  const { tenantId, occurredAt } = event;
  if (event.type === 'FulfillmentDispatched') {
    const d = event.data;
    const key = rowKey(tenantId, d.orderId);
    if (tracked.has(key)) throw new ProjectionInvariantError(`fulfillment of order ${tenantId}/${d.orderId} dispatched twice`);
    // Per-tenant sequence in log order: cursors follow it, so new delivery records always come last.
    const creationSeq = (lastSeqByTenant.get(tenantId) ?? 0n) + 1n;
    lastSeqByTenant.set(tenantId, creationSeq);
    tracked.set(key, {
      tenantId,
      orderId: d.orderId,
      dispatched: {
        creationSeq,
        fulfillmentId: d.fulfillmentId,
        sourceWarehouseId: d.sourceWarehouseId,
        destinationWarehouseId: d.destinationWarehouseId,
        dispatchedBy: d.dispatchedBy,
        carrier: d.carrier ?? null,
        trackingCode: d.trackingCode ?? null,
        boxIds: d.boxIds,
        dispatchedAt: occurredAt,
      },
      progress: { status: 'dispatched', exceptions: [], updatedAt: occurredAt, delivery: null, receipt: null, closure: null, lastMovementNo: 0, changed: event.position },
    });
    return;
  }
  if (!('orderId' in event.data)) return;
  const { orderId } = event.data;
  const fulfillment = tracked.get(rowKey(tenantId, orderId));
  if (fulfillment === undefined) throw new ProjectionInvariantError(`${event.type} of order ${tenantId}/${orderId}, which was never dispatched`);
  const progress = fulfillment.progress;
  const where = `${tenantId}/${orderId}`;
  switch (event.type) {
    case 'CustodyTransferred': {
      const d = event.data;
      progress.lastMovementNo += 1;
      movements.push({
        tenantId,
        orderId,
        movementNo: progress.lastMovementNo,
        custodyMovementId: d.custodyMovementId,
        type: d.type,
        fromActorId: d.fromActorId,
        toActorId: d.toActorId,
        location: d.location ?? null,
        occurredAt: d.occurredAt,
      });
      break;
    }
    case 'DeliveryExceptionRaised': {
      const { exceptionId, reasonCode, description } = event.data;
      if (progress.exceptions.some((e) => e.exceptionId === exceptionId)) {
        throw new ProjectionInvariantError(`exception ${exceptionId} of order ${where} raised twice`);
      }
      progress.exceptions = [...progress.exceptions, { exceptionId, reasonCode, description, reportedAt: occurredAt }];
      break;
    }
    case 'DeliveryExceptionResolved': {
      const { exceptionId, resolution } = event.data;
      const open = progress.exceptions.find((e) => e.exceptionId === exceptionId && e.resolution === undefined);
      if (open === undefined) throw new ProjectionInvariantError(`exception ${exceptionId} of order ${where} is not open`);
      progress.exceptions = progress.exceptions.map((e) => (e === open ? { ...e, resolution, resolvedAt: occurredAt } : e));
      break;
    }
    case 'FulfillmentDelivered':
      progress.delivery = deliveryJson(event.data);
      break;
    case 'FulfillmentReceived':
      progress.receipt = receiptJson(event.data);
      break;
    case 'FulfillmentClosed':
      progress.closure = JSON.stringify({ closedBy: event.data.closedBy, outcome: event.data.outcome, closedAt: occurredAt });
      break;
    default:
      break;
  }
  progress.status = fulfillmentStatusAfter(progress, event);
  progress.updatedAt = occurredAt;
  progress.changed = event.position;
}

/** The transitions documented on the status in schema.ts. */
function fulfillmentStatusAfter(progress: FulfillmentProgress, event: ProjectedEvent): FulfillmentStatus {
  const current = progress.status;
  // Closure is final: whatever is recorded afterwards does not reopen the record.
  if (current === 'closed') return current;
  switch (event.type) {
    case 'CustodyTransferred':
      return current === 'dispatched' ? 'in_transit' : current;
    case 'DeliveryExceptionRaised':
      return 'exception';
    case 'DeliveryExceptionResolved': {
      const stillOpen = progress.exceptions.some((e) => e.resolution === undefined);
      return current === 'exception' && !stillOpen ? 'in_transit' : current;
    }
    case 'FulfillmentDelivered':
      return 'delivered';
    case 'FulfillmentReceived':
      return event.data.discrepancies.length > 0 ? 'partially_received' : 'received';
    case 'FulfillmentClosed':
      return 'closed';
    default:
      return current;
  }
}

function deliveryJson(d: EventData<'FulfillmentDelivered'>): string {
  return JSON.stringify({
    deliveredBy: d.deliveredBy,
    receivedBy: d.receivedBy,
    deliveredAt: d.deliveredAt,
    ...(d.signatureRef === undefined ? {} : { signatureRef: d.signatureRef }),
  });
}

function receiptJson(d: EventData<'FulfillmentReceived'>): string {
  return JSON.stringify({
    receivedBy: d.receivedBy,
    receivedAt: d.receivedAt,
    lines: d.lines.map(({ lineId, catalogItemId, receivedQty }) => ({ lineId, catalogItemId, receivedQty })),
    discrepancies: d.discrepancies.map(({ lineId, catalogItemId, expectedQty, receivedQty, reasonCode }) => ({
      lineId,
      catalogItemId,
      expectedQty,
      receivedQty,
      reasonCode,
    })),
  });
}

/** One INSERT per table for what the batch creates, one UPDATE for the records it changes. */
async function writeFulfillments(tracked: readonly TrackedFulfillment[], movements: readonly CustodyMovement[], { db, table }: ProjectionContext): Promise<void> {
  const dispatched = tracked.flatMap((f) => (f.dispatched === undefined ? [] : [{ ...f, dispatched: f.dispatched }]));
  // Every record loaded at batch start is one the batch changes.
  const changed = tracked.filter((f) => f.dispatched === undefined);
  if (dispatched.length > 0) {
    // Box ids travel as one JSON array per row: unnest would flatten a text[] column.
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('fulfillments')} (
        tenant_id, order_id, creation_seq, fulfillment_id, status, source_warehouse_id, destination_warehouse_id,
        dispatched_by, carrier, tracking_code, box_ids, dispatched_at, delivery, receipt, closure, exceptions, updated_at,
        changed_tx, changed_seq
      )
      SELECT p.tenant_id, p.order_id, p.creation_seq, p.fulfillment_id, p.status, p.source_warehouse_id, p.destination_warehouse_id,
        p.dispatched_by, p.carrier, p.tracking_code,
        ARRAY(SELECT b.box_id FROM jsonb_array_elements_text(p.box_ids) WITH ORDINALITY AS b(box_id, n) ORDER BY b.n),
        p.dispatched_at, p.delivery, p.receipt, p.closure, p.exceptions, p.updated_at, p.changed_tx, p.changed_seq
      FROM ${sql.unnest(
        dispatched.map(({ tenantId, orderId, dispatched: d, progress: p }) => [
          tenantId,
          orderId,
          d.creationSeq,
          d.fulfillmentId,
          p.status,
          d.sourceWarehouseId,
          d.destinationWarehouseId,
          d.dispatchedBy,
          d.carrier,
          d.trackingCode,
          JSON.stringify(d.boxIds),
          d.dispatchedAt,
          p.delivery,
          p.receipt,
          p.closure,
          JSON.stringify(p.exceptions),
          p.updatedAt,
          p.changed.tx,
          p.changed.seq,
        ]),
        [
          'text', 'text', 'int8', 'text', 'text', 'text', 'text',
          'text', 'text', 'text', 'jsonb', 'timestamptz', 'jsonb', 'jsonb', 'jsonb', 'jsonb', 'timestamptz', 'int8', 'int8',
        ],
      )} AS p(
        tenant_id, order_id, creation_seq, fulfillment_id, status, source_warehouse_id, destination_warehouse_id,
        dispatched_by, carrier, tracking_code, box_ids, dispatched_at, delivery, receipt, closure, exceptions, updated_at,
        changed_tx, changed_seq
      )
    `);
  }
  if (changed.length > 0) {
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('fulfillments')} AS f
      SET status = p.status,
        delivery = coalesce(p.delivery, f.delivery),
        receipt = coalesce(p.receipt, f.receipt),
        closure = coalesce(p.closure, f.closure),
        exceptions = p.exceptions,
        updated_at = p.updated_at,
        changed_tx = p.changed_tx,
        changed_seq = p.changed_seq
      FROM ${sql.unnest(
        changed.map(({ tenantId, orderId, progress: p }) => [
          tenantId,
          orderId,
          p.status,
          p.delivery,
          p.receipt,
          p.closure,
          JSON.stringify(p.exceptions),
          p.updatedAt,
          p.changed.tx,
          p.changed.seq,
        ]),
        ['text', 'text', 'text', 'jsonb', 'jsonb', 'jsonb', 'jsonb', 'timestamptz', 'int8', 'int8'],
      )} AS p(tenant_id, order_id, status, delivery, receipt, closure, exceptions, updated_at, changed_tx, changed_seq)
      WHERE f.tenant_id = p.tenant_id AND f.order_id = p.order_id
    `);
    expectRowCount('fulfillment update', result.rowCount, changed.length);
  }
  if (movements.length > 0) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('fulfillment_custody')} (
        tenant_id, order_id, movement_no, custody_movement_id, type, from_actor_id, to_actor_id, location, occurred_at
      )
      SELECT * FROM ${sql.unnest(
        movements.map((m) => [m.tenantId, m.orderId, m.movementNo, m.custodyMovementId, m.type, m.fromActorId, m.toActorId, m.location, m.occurredAt]),
        ['text', 'text', 'int4', 'text', 'text', 'text', 'text', 'text', 'timestamptz'],
      )}
    `);
  }
}
