import { z } from 'zod';
import { orderStatus, type EventData, type OrderStatus } from '../../src/events/index.js';
import { isAllowedOrderTransition, orderStatusAfter } from '../../src/events/orderStatusTransitions.js';
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
import { loadLastCreationSequences } from '../shared/creationSequence.js';
import { untrackedOrders } from '../shared/touchedOrders.js';
import { recordset } from '../shared/recordset.js';
import { outputOnlyColumns } from '../shared/outputOnlyColumns.js';

type StatusTimestampColumn = 'submittedAt' | 'approvedAt' | 'dispatchedAt' | 'deliveredAt' | 'receivedAt' | 'closedAt';
type StatusTimestamps = Record<StatusTimestampColumn, string | null>;

/** Statuses whose first entry is kept as a timestamp of its own, for cycle times later. */
const statusTimestamps: Partial<Record<OrderStatus, StatusTimestampColumn>> = {
  submitted: 'submittedAt',
  approved: 'approvedAt',
  dispatched: 'dispatchedAt',
  delivered: 'deliveredAt',
  received: 'receivedAt',
  partially_fulfilled: 'receivedAt',
  closed: 'closedAt',
};

/**
 * What the events after the draft change, written back once per batch. For an order that existed
 * before the batch, the status timestamps hold only first entries seen in this batch: the UPDATE
 * keeps the ones the row already has.
 */
type OrderProgress = StatusTimestamps & {
  status: OrderStatus;
  version: number;
  /** JSON of the stored plan; null until submitted. */
  approvalPlan: string | null;
  updatedAt: string;
  /** Log position of the last event that changed the order (the change feed's order). */
  changed: LogPosition;
};

type DraftedOrder = {
  creationSeq: bigint;
  number: number;
  type: string;
  requesterId: string;
  clinicId: string;
  destinationWarehouseId: string;
  preferredSourceWarehouseId: string | null;
  justification: string | null;
  createdAt: string;
  lines: EventData<'OrderDrafted'>['lines'];
};

type TrackedOrder = {
  readonly tenantId: string;
  readonly orderId: string;
  /** Set when the order was drafted in this batch: the row is inserted rather than updated. */
  readonly drafted: DraftedOrder | undefined;
  progress: OrderProgress;
};

const tables: readonly TableDefinition[] = [
  {
    name: 'orders',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('orders')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          creation_seq bigint NOT NULL,
          number integer NOT NULL,
          type text NOT NULL,
          status text NOT NULL,
          requester_id text COLLATE "C" NOT NULL,
          clinic_id text COLLATE "C" NOT NULL,
          destination_warehouse_id text COLLATE "C" NOT NULL,
          preferred_source_warehouse_id text COLLATE "C",
          justification text,
          approval_plan jsonb,
          version integer NOT NULL,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          submitted_at timestamptz,
          approved_at timestamptz,
          dispatched_at timestamptz,
          delivered_at timestamptz,
          received_at timestamptz,
          closed_at timestamptz,
          -- Log position of the event that last changed the order: the change feed pages by it.
          changed_tx bigint NOT NULL,
          changed_seq bigint NOT NULL,
          -- The order's item of GET /v1/orders as JSON text, byte for byte what JSON.stringify
          -- makes of it (orderListItem's keys in order): the page is these texts joined.
          item_json text GENERATED ALWAYS AS (
            '{"orderId":' || json_quote(order_id) || ',"number":' || number::text || ',"type":' || json_quote(type) ||
            ',"status":' || json_quote(status) || ',"requesterId":' || json_quote(requester_id) ||
            ',"clinicId":' || json_quote(clinic_id) || ',"destinationWarehouseId":' || json_quote(destination_warehouse_id) ||
            ',"version":' || version::text || '}'
          ) STORED,
          PRIMARY KEY (tenant_id, order_id)
        )
      `,
      sql.typeAlias('void')`CREATE UNIQUE INDEX ON ${table('orders')} (tenant_id, creation_seq)`,
      sql.typeAlias('void')`CREATE INDEX ON ${table('orders')} (tenant_id, status, creation_seq)`,
      outputOnlyColumns(table('orders'), ['justification', 'approval_plan', 'item_json']),
    ],
    // Only the change feed reads it (the projection writes by primary key).
    deferredIndexes: (table) => [sql.typeAlias('void')`CREATE INDEX ON ${table('orders')} (tenant_id, changed_tx, changed_seq, order_id)`],
  },
  {
    name: 'order_lines',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('order_lines')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          line_no integer NOT NULL,
          line_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          sku text NOT NULL,
          name text NOT NULL,
          requested_qty integer NOT NULL,
          unit_of_measure text NOT NULL,
          category_id text COLLATE "C" NOT NULL,
          high_value boolean NOT NULL,
          unit_cost bigint,
          currency text,
          PRIMARY KEY (tenant_id, order_id, line_no)
        )
      `,
      // An order's lines are read by its key, in line order: the rest is only returned.
      outputOnlyColumns(table('order_lines'), ['line_id', 'catalog_item_id', 'sku', 'name', 'requested_qty', 'unit_of_measure', 'category_id', 'high_value', 'unit_cost', 'currency']),
    ],
  },
];

const handledEvents = [
  'OrderDrafted',
  'OrderSubmitted',
  'OrderApprovalRequested',
  'OrderApprovalGranted',
  'OrderApproved',
  'OrderRejected',
  'OrderCancelled',
  'OrderAllocated',
  'OrderPickingStarted',
  'FulfillmentDispatched',
  'DeliveryExceptionRaised',
  'DeliveryExceptionResolved',
  'FulfillmentDelivered',
  'FulfillmentReceived',
  'FulfillmentClosed',
] as const;

/** Orders as a fold: the orders the events touch, read once, changed in memory, written once. */
const ordersFolding: Folding = {
  begin: async (context) => {
    const tracked = new Map<string, TrackedOrder>();
    const lastSeqByTenant = new Map<string, bigint>();
    return {
      fold: async (events) => {
        await loadTouchedOrders(events, tracked, context);
        await loadLastCreationSeqs(events, lastSeqByTenant, context);
        for (const event of events) foldEvent(event, tracked, lastSeqByTenant);
      },
      write: (writeContext) => writeOrders([...tracked.values()], writeContext),
    };
  },
};

/**
 * Orders with their lines and approval plan, and the status the order and fulfillment streams give
 * them. Order value, currency, patient reference and the plan's evaluated value are never stored.
 */
export const ordersProjection: Projection = {
  name: 'orders',
  // 2: item_json. 3: changed_tx, changed_seq (the change feed).
  version: 3,
  tables,
  handles: handledEvents,
  fold: ordersFolding,
};

/**
 * Status and version of every order the events touch that exists already and is not tracked yet
 * (the fold holds those it read or drafted), in one query, into `tracked`.
 */
async function loadTouchedOrders(events: readonly ProjectedEvent[], tracked: Map<string, TrackedOrder>, { db, table }: FoldContext): Promise<void> {
  const keys = untrackedOrders(events, tracked);
  if (keys.length === 0) return;
  const rows = await db.any(sql.type(existingOrderRow)`
    SELECT tenant_id AS "tenantId", order_id AS "orderId", status, version, updated_at AS "updatedAt",
      changed_tx AS "changedTx", changed_seq AS "changedSeq"
    FROM ${table('orders')}
    WHERE (tenant_id, order_id) IN (SELECT * FROM ${sql.unnest(keys, ['text', 'text'])})
  `);
  for (const row of rows) {
    tracked.set(rowKey(row.tenantId, row.orderId), {
      tenantId: row.tenantId,
      orderId: row.orderId,
      drafted: undefined,
      progress: { ...emptyProgress(row.updatedAt, { tx: row.changedTx, seq: row.changedSeq }), status: row.status, version: row.version },
    });
  }
}

const existingOrderRow = z.object({
  tenantId: z.string(),
  orderId: z.string(),
  status: orderStatus,
  version: z.number().int(),
  updatedAt: z.string(),
  changedTx: z.bigint(),
  changedSeq: z.bigint(),
});

/** The highest creation sequence of each tenant that drafts orders in the events, unless the fold knows it already. */
async function loadLastCreationSeqs(events: readonly ProjectedEvent[], known: Map<string, bigint>, { db, table }: FoldContext): Promise<void> {
  const tenants = events.flatMap((e) => (e.type === 'OrderDrafted' ? [e.tenantId] : []));
  await loadLastCreationSequences(db, table('orders'), tenants, known);
}

function emptyProgress(updatedAt: string, changed: LogPosition): OrderProgress {
  return {
    changed,
    status: 'draft',
    version: 1,
    approvalPlan: null,
    updatedAt,
    submittedAt: null,
    approvedAt: null,
    dispatchedAt: null,
    deliveredAt: null,
    receivedAt: null,
    closedAt: null,
  };
}

function foldEvent(event: ProjectedEvent, tracked: Map<string, TrackedOrder>, lastSeqByTenant: Map<string, bigint>): void {
  const { tenantId, occurredAt } = event;
  if (event.type === 'OrderDrafted') {
    const d = event.data;
    const key = rowKey(tenantId, d.orderId);
    if (tracked.has(key)) throw new ProjectionInvariantError(`order ${tenantId}/${d.orderId} drafted twice`);
    // Per-tenant sequence in log order: cursors follow it, so new orders always come last.
    const creationSeq = (lastSeqByTenant.get(tenantId) ?? 0n) + 1n;
    lastSeqByTenant.set(tenantId, creationSeq);
    tracked.set(key, {
      tenantId,
      orderId: d.orderId,
      drafted: {
        creationSeq,
        number: d.number,
        type: d.type,
        requesterId: d.requesterId,
        clinicId: d.clinicId,
        destinationWarehouseId: d.destinationWarehouseId,
        preferredSourceWarehouseId: d.preferredSourceWarehouseId ?? null,
        justification: d.justification ?? null,
        createdAt: occurredAt,
        lines: d.lines,
      },
      progress: emptyProgress(occurredAt, event.position),
    });
    return;
  }
  if (!('orderId' in event.data)) return;
  const { orderId } = event.data;
  const order = tracked.get(rowKey(tenantId, orderId));
  if (order === undefined) throw new ProjectionInvariantError(`${event.type} of order ${tenantId}/${orderId}, which was never drafted`);
  const progress = order.progress;
  const status = orderStatusAfter(event);
  if (status !== undefined) guardOrderTransition(event, order, status);
  progress.updatedAt = occurredAt;
  progress.changed = event.position;
  if (event.type === 'OrderSubmitted') progress.approvalPlan = storedApprovalPlan(event.data.approvalPlan);
  // The version counts status changes: a second approval stage asked for is no new version.
  if (status !== undefined && status !== progress.status) {
    progress.status = status;
    progress.version += 1;
    const column = statusTimestamps[status];
    if (column !== undefined && progress[column] === null) progress[column] = occurredAt;
  }
}

/**
 * The order state machine's guard: an event that would move an order where its status cannot go
 * (back from dispatched to picking, out of a final status) is poison. Live, the projector
 * dead-letters it (recorded in `projection_dead_letters`, counted, shown by `projections status`)
 * and the order keeps its last allowed status and version; a replay stops on it.
 */
export function guardOrderTransition(event: ProjectedEvent, order: TrackedOrder, to: OrderStatus): void {
  const from = order.progress.status;
  if (isAllowedOrderTransition(from, to)) return;
  throw new ProjectionInvariantError(`${event.type} would move order ${order.tenantId}/${order.orderId} from ${from} to ${to}, which the order state machine does not allow`);
}

/** The plan as stored: the value it was evaluated on is never kept. */
function storedApprovalPlan(plan: EventData<'OrderSubmitted'>['approvalPlan']): string {
  return JSON.stringify({
    policyVersion: plan.policyVersion,
    requiresApproval: plan.requiresApproval,
    steps: plan.steps.map(({ stage, requiredScope, minApprovers }) => ({ stage, requiredScope, minApprovers })),
    ...(plan.currency === undefined ? {} : { currency: plan.currency }),
  });
}

/** One INSERT per table for the orders drafted in the batch, one UPDATE for the others it changed. */
async function writeOrders(tracked: readonly TrackedOrder[], { db, table }: ProjectionContext): Promise<void> {
  const drafted = tracked.flatMap((order) => (order.drafted === undefined ? [] : [{ ...order, drafted: order.drafted }]));
  // Every order loaded at batch start is one the batch changes.
  const changed = tracked.filter((order) => order.drafted === undefined);
  if (drafted.length > 0) {
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('orders')} (
        tenant_id, order_id, creation_seq, number, type, status, requester_id, clinic_id, destination_warehouse_id,
        preferred_source_warehouse_id, justification, approval_plan, version, created_at, updated_at,
        submitted_at, approved_at, dispatched_at, delivered_at, received_at, closed_at, changed_tx, changed_seq
      )
      SELECT * FROM ${sql.unnest(
        drafted.map(({ tenantId, orderId, drafted: d, progress: p }) => [
          tenantId,
          orderId,
          d.creationSeq,
          d.number,
          d.type,
          p.status,
          d.requesterId,
          d.clinicId,
          d.destinationWarehouseId,
          d.preferredSourceWarehouseId,
          d.justification,
          p.approvalPlan,
          p.version,
          d.createdAt,
          p.updatedAt,
          p.submittedAt,
          p.approvedAt,
          p.dispatchedAt,
          p.deliveredAt,
          p.receivedAt,
          p.closedAt,
          p.changed.tx,
          p.changed.seq,
        ]),
        [
          'text', 'text', 'int8', 'int4', 'text', 'text', 'text', 'text', 'text',
          'text', 'text', 'jsonb', 'int4', 'timestamptz', 'timestamptz',
          'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz', 'timestamptz', 'int8', 'int8',
        ],
      )}
    `);
    await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('order_lines')} (
        tenant_id, order_id, line_no, line_id, catalog_item_id, sku, name, requested_qty, unit_of_measure,
        category_id, high_value, unit_cost, currency
      )
      SELECT t, o, n, l, i, k, m, q, u, g, h, c, y
      FROM json_to_recordset(${recordset(
        drafted.flatMap(({ tenantId, orderId, drafted: d }) =>
          d.lines.map((line, index) => ({
            t: tenantId,
            o: orderId,
            n: index + 1,
            l: line.lineId,
            i: line.catalogItemId,
            k: line.sku,
            m: line.name,
            q: line.requestedQty,
            u: line.unitOfMeasure,
            g: line.categoryId,
            h: line.highValue,
            c: line.unitCost ?? null,
            y: line.currency ?? null,
          })),
        ),
      )}) AS x(t text, o text, n int4, l text, i text, k text, m text, q int4, u text, g text, h bool, c int8, y text)
    `);
  }
  if (changed.length > 0) {
    // Status timestamps keep the first time the order entered the status, also across batches.
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('orders')} AS o
      SET status = p.s,
        version = p.v,
        approval_plan = coalesce(p.a::jsonb, o.approval_plan),
        updated_at = p.u,
        submitted_at = coalesce(o.submitted_at, p.sa),
        approved_at = coalesce(o.approved_at, p.aa),
        dispatched_at = coalesce(o.dispatched_at, p.da),
        delivered_at = coalesce(o.delivered_at, p.va),
        received_at = coalesce(o.received_at, p.ra),
        closed_at = coalesce(o.closed_at, p.ca),
        changed_tx = p.ct,
        changed_seq = p.cs
      FROM json_to_recordset(${recordset(
        changed.map(({ tenantId, orderId, progress: p }) => ({
          t: tenantId,
          o: orderId,
          s: p.status,
          v: p.version,
          a: p.approvalPlan,
          u: p.updatedAt,
          sa: p.submittedAt,
          aa: p.approvedAt,
          da: p.dispatchedAt,
          va: p.deliveredAt,
          ra: p.receivedAt,
          ca: p.closedAt,
          // As text: JSON numbers lose a bigint's precision.
          ct: p.changed.tx.toString(),
          cs: p.changed.seq.toString(),
        })),
      )}) AS p(t text, o text, s text, v int4, a text, u timestamptz, sa timestamptz, aa timestamptz, da timestamptz, va timestamptz, ra timestamptz, ca timestamptz, ct int8, cs int8)
      WHERE o.tenant_id = p.t AND o.order_id = p.o
    `);
    expectRowCount('order update', result.rowCount, changed.length);
  }
}
