import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { sql } from '../../src/platform/sql.js';
import { ProjectionInvariantError, type Projection, type ProjectedEvent, type ProjectionContext, type TableDefinition } from '../../src/projecting/projection.js';
import { RowChanges, rowKey } from '../../src/projecting/rowChanges.js';

type MovementRecord = {
  tenantId: string;
  movementId: string;
  boxId: string;
  type: string;
  catalogItemId: string;
  quantityDelta: number;
  reservedDelta: number | null;
  actorId: string;
  secondActorId: string | null;
  fromWarehouseId: string | null;
  toWarehouseId: string | null;
  reasonCode: string | null;
  idempotencyKey: string | null;
  correlationId: string | null;
  splitId: string | null;
  occurredAt: string;
  recordedAt: string;
  positionTx: bigint;
  positionSeq: bigint;
};

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
    ],
    // Insert-only, so no write looks a row up: a replay adds the key and the index after its bulk load.
    deferredIndexes: (table) => [
      sql.typeAlias('void')`ALTER TABLE ${table('stock_movements')} ADD PRIMARY KEY (tenant_id, movement_id)`,
      // A box's ledger, oldest first; the log position breaks ties of equal occurredAt.
      sql.typeAlias('void')`CREATE INDEX ON ${table('stock_movements')} (tenant_id, box_id, occurred_at, position_tx, position_seq)`,
    ],
  },
];

/** The append-only ledger of every box: one row per StockMovementRecorded, never changed. */
export const stockMovementsProjection: Projection = {
  name: 'stock_movements',
  version: 1,
  tables,
  handles: ['StockMovementRecorded'],
  apply: async (events, context) => {
    // Only created rows: RowChanges names a movement id repeated within the batch.
    const movements = new RowChanges<MovementRecord>('stock movement');
    for (const event of events) foldEvent(event, movements);

    const created = movements.created;
    if (created.length === 0) return;
    try {
      await insertMovements(context, created);
    } catch (error) {
      // The only unique key is the movement id: a movement recorded again in a later batch.
      if (error instanceof UniqueIntegrityConstraintViolationError) {
        const detail = error.cause !== undefined && 'detail' in error.cause && typeof error.cause.detail === 'string' ? `: ${error.cause.detail}` : '';
        throw new ProjectionInvariantError(`stock movement recorded twice${detail}`);
      }
      throw error;
    }
  },
};

/**
 * A plain INSERT, not ON CONFLICT DO NOTHING plus a row count: this table takes most rows of a
 * rebuild, and the speculative insertion costs about 15 % more; the primary key still refuses a
 * repeated movement id, which then dead-letters.
 */
async function insertMovements({ db, table }: ProjectionContext, created: readonly MovementRecord[]): Promise<void> {
  await db.query(sql.typeAlias('void')`
    INSERT INTO ${table('stock_movements')} (
      tenant_id, movement_id, box_id, type, catalog_item_id, quantity_delta, reserved_delta, actor_id,
      second_actor_id, from_warehouse_id, to_warehouse_id, reason_code, idempotency_key, correlation_id,
      split_id, occurred_at, recorded_at, position_tx, position_seq
    )
    SELECT * FROM ${sql.unnest(
      created.map((m) => [
        m.tenantId,
        m.movementId,
        m.boxId,
        m.type,
        m.catalogItemId,
        m.quantityDelta,
        m.reservedDelta,
        m.actorId,
        m.secondActorId,
        m.fromWarehouseId,
        m.toWarehouseId,
        m.reasonCode,
        m.idempotencyKey,
        m.correlationId,
        m.splitId,
        m.occurredAt,
        m.recordedAt,
        m.positionTx,
        m.positionSeq,
      ]),
      [
        'text', 'text', 'text', 'text', 'text', 'int8', 'int8', 'text', 'text', 'text', 'text', 'text', 'text', 'text',
        'text', 'timestamptz', 'timestamptz', 'int8', 'int8',
      ],
    )}
  `);
}

function foldEvent(event: ProjectedEvent, movements: RowChanges<MovementRecord>): void {
  if (event.type !== 'StockMovementRecorded') return;
  const m = event.data;
  movements.create(rowKey(event.tenantId, m.movementId), {
    tenantId: event.tenantId,
    movementId: m.movementId,
    boxId: m.boxId,
    type: m.type,
    catalogItemId: m.catalogItemId,
    quantityDelta: m.quantityDelta,
    reservedDelta: m.reservedDelta ?? null,
    actorId: m.actorId,
    secondActorId: m.secondActorId ?? null,
    fromWarehouseId: m.fromWarehouseId ?? null,
    toWarehouseId: m.toWarehouseId ?? null,
    reasonCode: m.reasonCode ?? null,
    idempotencyKey: m.idempotencyKey ?? null,
    correlationId: m.correlationId ?? null,
    splitId: m.splitId ?? null,
    occurredAt: m.occurredAt,
    recordedAt: event.recordedAt,
    positionTx: event.position.tx,
    positionSeq: event.position.seq,
  });
}
