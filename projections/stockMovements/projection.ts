import { sql } from '../../src/platform/sql.js';
import { insertOnlyFolding, ProjectionInvariantError, type ColumnValue, type Projection, type ProjectedEvent, type TableDefinition } from '../../src/projecting/projection.js';
import { rowKey } from '../../src/projecting/rowChanges.js';
import { outputOnlyColumns } from '../shared/outputOnlyColumns.js';

/** The columns of a movement row, in the order of movementRows' values, with their types. */
const movementColumns = [
  ['tenant_id', 'text'],
  ['movement_id', 'text'],
  ['box_id', 'text'],
  ['type', 'text'],
  ['catalog_item_id', 'text'],
  ['quantity_delta', 'int8'],
  ['reserved_delta', 'int8'],
  ['actor_id', 'text'],
  ['second_actor_id', 'text'],
  ['from_warehouse_id', 'text'],
  ['to_warehouse_id', 'text'],
  ['reason_code', 'text'],
  ['idempotency_key', 'text'],
  ['correlation_id', 'text'],
  ['split_id', 'text'],
  ['occurred_at', 'timestamptz'],
  ['recorded_at', 'timestamptz'],
  ['position_tx', 'int8'],
  ['position_seq', 'int8'],
] as const;

const tables: readonly TableDefinition[] = [
  {
    name: 'stock_movements',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('stock_movements')} (
          tenant_id text COLLATE "C" NOT NULL,
          movement_id text COLLATE "C" NOT NULL,
          box_id text COLLATE "C" NOT NULL,
          type text NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          quantity_delta bigint NOT NULL,
          reserved_delta bigint,
          actor_id text COLLATE "C" NOT NULL,
          second_actor_id text COLLATE "C",
          from_warehouse_id text COLLATE "C",
          to_warehouse_id text COLLATE "C",
          reason_code text,
          idempotency_key text,
          correlation_id text,
          split_id text,
          occurred_at timestamptz NOT NULL,
          recorded_at timestamptz NOT NULL,
          position_tx bigint NOT NULL,
          position_seq bigint NOT NULL
        )
      `,
      // Readers look a box's ledger up and order it: the other columns are only returned.
      outputOnlyColumns(
        table('stock_movements'),
        movementColumns.map(([name]) => name).filter((name) => !['tenant_id', 'box_id', 'occurred_at', 'position_tx', 'position_seq'].includes(name)),
      ),
    ],
    // Insert-only, so no write looks a row up: a replay builds both after its bulk load, side by side.
    // The key is a unique index rather than a PRIMARY KEY constraint: ALTER TABLE would lock the table
    // against the ledger index's build beside it.
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE UNIQUE INDEX ON ${table('stock_movements')} (tenant_id, movement_id)`,
      // A box's ledger, oldest first; the log position breaks ties of equal occurredAt.
      sql.typeAlias('void')`CREATE INDEX ON ${table('stock_movements')} (tenant_id, box_id, occurred_at, position_tx, position_seq)`,
    ],
  },
];

/**
 * The append-only ledger of every box: one row per StockMovementRecorded, never changed. Live
 * batches insert the rows; a rebuild on Postgres loads them with COPY or from the log.
 */
export const stockMovementsProjection: Projection = {
  name: 'stock_movements',
  version: 1,
  tables,
  handles: ['StockMovementRecorded'],
  // The only unique key is the movement id: a row it refuses is a movement recorded again in a later batch.
  fold: insertOnlyFolding({ table: 'stock_movements', columns: movementColumns, rowsOf: movementRows, duplicate: 'stock movement recorded twice', fromLog: movementsFromLog() }),
};

/**
 * movementRows in SQL, over the log table: the data's fields as the JSON holds them (`->>` gives
 * what JSON.parse does), recordedAt truncated to the millisecond as the log's readers give it.
 */
function movementsFromLog() {
  const field = (name: string) => sql.fragment`e.data->>${name}`;
  // The upcasters of StockMovementRecorded (src/events/upcasters.ts) in SQL: v2 renamed secondActorId.
  const columns = {
    tenant_id: sql.fragment`e.tenant_id`,
    movement_id: field('movementId'),
    box_id: field('boxId'),
    type: field('type'),
    catalog_item_id: field('catalogItemId'),
    quantity_delta: sql.fragment`(${field('quantityDelta')})::int8`,
    reserved_delta: sql.fragment`(${field('reservedDelta')})::int8`,
    actor_id: field('actorId'),
    second_actor_id: sql.fragment`CASE WHEN e.schema_version = 1 THEN ${field('secondActorId')} ELSE ${field('witnessId')} END`,
    from_warehouse_id: field('fromWarehouseId'),
    to_warehouse_id: field('toWarehouseId'),
    reason_code: field('reasonCode'),
    idempotency_key: field('idempotencyKey'),
    correlation_id: field('correlationId'),
    split_id: field('splitId'),
    occurred_at: sql.fragment`(${field('occurredAt')})::timestamptz`,
    recorded_at: sql.fragment`date_trunc('milliseconds', e.recorded_at)`,
    position_tx: sql.fragment`e.transaction_id::text::int8`,
    position_seq: sql.fragment`e.global_position`,
  } satisfies Record<(typeof movementColumns)[number][0], unknown>;
  const select = sql.fragment`${sql.join(
    movementColumns.map(([name]) => columns[name]),
    sql.fragment`, `,
  )}`;
  return { select, version: 2 };
}

/** The rows of the batch's movements in column order; a movement id twice in the batch is refused. */
function movementRows(events: readonly ProjectedEvent[]): (readonly ColumnValue[])[] {
  const rows: (readonly ColumnValue[])[] = [];
  const seen = new Set<string>();
  for (const event of events) {
    if (event.type !== 'StockMovementRecorded') continue;
    const m = event.data;
    const key = rowKey(event.tenantId, m.movementId);
    if (seen.has(key)) throw new ProjectionInvariantError(`stock movement ${event.tenantId}/${m.movementId} created twice`);
    seen.add(key);
    rows.push([
      event.tenantId,
      m.movementId,
      m.boxId,
      m.type,
      m.catalogItemId,
      m.quantityDelta,
      m.reservedDelta ?? null,
      m.actorId,
      m.witnessId ?? null,
      m.fromWarehouseId ?? null,
      m.toWarehouseId ?? null,
      m.reasonCode ?? null,
      m.idempotencyKey ?? null,
      m.correlationId ?? null,
      m.splitId ?? null,
      m.occurredAt,
      event.recordedAt,
      event.position.tx,
      event.position.seq,
    ]);
  }
  return rows;
}
