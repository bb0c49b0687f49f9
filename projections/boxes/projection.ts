import { sql } from '../../src/platform/sql.js';
import { expectRowCount, inMemoryFolding, type Projection, type ProjectedEvent, type ProjectionContext, type TableDefinition } from '../../src/projecting/projection.js';
import type { LogPosition } from '../../src/eventStore/eventStore.js';
import { RowChanges } from '../../src/projecting/rowChanges.js';
import { recordset } from '../shared/recordset.js';
import { outputOnlyColumns } from '../shared/outputOnlyColumns.js';

type BoxRecord = {
  tenantId: string;
  boxId: string;
  code: string;
  catalogItemId: string;
  warehouseId: string;
  status: string;
  lot: string | null;
  serials: readonly string[] | null;
  expiresOn: string | null;
  originType: string;
  originReference: string | null;
  onHand: number;
  reserved: number;
  registeredAt: string;
  updatedAt: string;
  /** Log position of the last event that changed the box (the change feed's order). */
  changed: LogPosition;
};

/** What a batch does to a box that existed before it: quantities as deltas, the rest latest-wins. */
type BoxPatch = {
  tenantId: string;
  boxId: string;
  onHandDelta: number;
  reservedDelta: number;
  warehouseId: string | null;
  status: string | null;
  updatedAt: string;
  changed: LogPosition;
};

const tables: readonly TableDefinition[] = [
  {
    name: 'boxes',
    // Every movement updates its box: half-full pages keep those updates on their page (the
    // change feed's index on changed_tx, changed_seq takes a new entry for each).
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('boxes')} (
          tenant_id text COLLATE "C" NOT NULL,
          box_id text COLLATE "C" NOT NULL,
          code text NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          lot text,
          serials text[],
          expires_on date,
          origin_type text NOT NULL,
          origin_reference text,
          on_hand bigint NOT NULL,
          reserved bigint NOT NULL,
          registered_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          -- Log position of the event that last changed the box: the change feed pages by it.
          changed_tx bigint NOT NULL,
          changed_seq bigint NOT NULL,
          -- The box's item of GET /v1/inventory/balances as JSON text, byte for byte what
          -- JSON.stringify makes of it (boxBalanceRow's keys in order): the page is these texts
          -- joined, with no row object built, converted or serialised on the request's path.
          balance_json text GENERATED ALWAYS AS (
            '{"boxId":' || json_quote(box_id) || ',"catalogItemId":' || json_quote(catalog_item_id) ||
            ',"warehouseId":' || json_quote(warehouse_id) || ',"onHand":' || on_hand::text ||
            ',"reserved":' || reserved::text || ',"available":' || (on_hand - reserved)::text || '}'
          ) STORED,
          PRIMARY KEY (tenant_id, box_id)
        ) WITH (fillfactor = 50)
      `,
      outputOnlyColumns(table('boxes'), ['lot', 'serials', 'origin_reference', 'balance_json']),
    ],
    // Only the balance filters read these (each pages by box id, so each ends with it); the
    // projection's own writes go by primary key.
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE INDEX ON ${table('boxes')} (tenant_id, warehouse_id, box_id)`,
      sql.typeAlias('void')`CREATE INDEX ON ${table('boxes')} (tenant_id, catalog_item_id, box_id)`,
      // The change feed's keyset.
      sql.typeAlias('void')`CREATE INDEX ON ${table('boxes')} (tenant_id, changed_tx, changed_seq, box_id)`,
    ],
  },
];

/**
 * A batch's boxes. Every change is folded in place (changeBox): the rows and patches are the
 * batch's own, and a new object for every movement of a box would be most of what a rebuild
 * leaves to the garbage collector.
 */
const boxChanges = () => new RowChanges<BoxRecord, BoxPatch>('box');

/** Boxes as a fold: each box's changes coalesce into one row to insert or one patch to apply. */
const boxesFolding = inMemoryFolding(boxChanges, foldEvent, writeBoxes);

/** Every stock box of every tenant: its record and its balance (onHand, reserved). */
export const boxesProjection: Projection = {
  name: 'boxes',
  // 2: balance_json. 3: changed_tx, changed_seq (the change feed).
  version: 3,
  tables,
  handles: ['BoxRegistered', 'BoxStatusChanged', 'StockMovementRecorded'],
  fold: boxesFolding,
};

/** One INSERT of the boxes registered, one UPDATE of the others' combined patches. */
async function writeBoxes(boxes: RowChanges<BoxRecord, BoxPatch>, { db, table }: ProjectionContext): Promise<void> {
  const created = boxes.created;
  if (created.length > 0) {
    // ON CONFLICT + row count: a box registered again in a later batch is dead-lettered by name.
    const rows = created.map((b) => ({
      t: b.tenantId,
      b: b.boxId,
      c: b.code,
      i: b.catalogItemId,
      w: b.warehouseId,
      s: b.status,
      l: b.lot,
      n: b.serials,
      e: b.expiresOn,
      o: b.originType,
      f: b.originReference,
      h: b.onHand,
      r: b.reserved,
      g: b.registeredAt,
      u: b.updatedAt,
      ct: b.changed.tx.toString(),
      cs: b.changed.seq.toString(),
    }));
    const result = await db.query(sql.typeAlias('void')`
      INSERT INTO ${table('boxes')} (
        tenant_id, box_id, code, catalog_item_id, warehouse_id, status, lot, serials, expires_on,
        origin_type, origin_reference, on_hand, reserved, registered_at, updated_at, changed_tx, changed_seq
      )
      SELECT t, b, c, i, w, s, l, n, e, o, f, h, r, g, u, ct, cs
      FROM json_to_recordset(${recordset(rows)})
        AS x(t text, b text, c text, i text, w text, s text, l text, n text[], e date, o text, f text, h int8, r int8, g timestamptz, u timestamptz, ct int8, cs int8)
      ON CONFLICT (tenant_id, box_id) DO NOTHING
    `);
    expectRowCount('box registration (already registered?)', result.rowCount, created.length);
  }

  const patches = boxes.patches;
  if (patches.length > 0) {
    const rows = patches.map((p) => ({
      t: p.tenantId,
      b: p.boxId,
      h: p.onHandDelta,
      r: p.reservedDelta,
      w: p.warehouseId,
      s: p.status,
      u: p.updatedAt,
      ct: p.changed.tx.toString(),
      cs: p.changed.seq.toString(),
    }));
    const result = await db.query(sql.typeAlias('void')`
      UPDATE ${table('boxes')} AS b
      SET on_hand = b.on_hand + p.h, reserved = b.reserved + p.r,
        warehouse_id = coalesce(p.w, b.warehouse_id), status = coalesce(p.s, b.status), updated_at = p.u,
        changed_tx = p.ct, changed_seq = p.cs
      FROM json_to_recordset(${recordset(rows)}) AS p(t text, b text, h int8, r int8, w text, s text, u timestamptz, ct int8, cs int8)
      WHERE b.tenant_id = p.t AND b.box_id = p.b
    `);
    expectRowCount('box update (box never registered?)', result.rowCount, patches.length);
  }
}

function foldEvent(event: ProjectedEvent, boxes: RowChanges<BoxRecord, BoxPatch>): void {
  const { tenantId, occurredAt: updatedAt, position: changed } = event;
  switch (event.type) {
    case 'BoxRegistered': {
      const { boxId, code, catalogItemId, warehouseId, status, lot, serials, expiresOn, origin } = event.data;
      boxes.create(tenantId, boxId, {
        tenantId,
        boxId,
        code,
        catalogItemId,
        warehouseId,
        status,
        lot: lot ?? null,
        serials: serials ?? null,
        expiresOn: expiresOn ?? null,
        originType: origin.type,
        originReference: origin.reference ?? null,
        onHand: 0,
        reserved: 0,
        registeredAt: updatedAt,
        updatedAt,
        changed,
      });
      break;
    }
    case 'BoxStatusChanged':
      changeBox(boxes, tenantId, event.data.boxId, 0, 0, null, event.data.status, updatedAt, changed);
      break;
    case 'StockMovementRecorded': {
      const { boxId, type, quantityDelta, reservedDelta, toWarehouseId } = event.data;
      // Only a transfer moves the box itself; an issue names warehouses but the box stays put.
      const warehouseId = type === 'transfer' && toWarehouseId !== undefined ? toWarehouseId : null;
      changeBox(boxes, tenantId, boxId, quantityDelta, reservedDelta ?? 0, warehouseId, null, updatedAt, changed);
      break;
    }
    default:
      break;
  }
}

/**
 * One change of a box (quantities as deltas; a warehouse or status of null leaves it as it is), in
 * place: on the row when the box was registered in this batch, else on its patch, which the first
 * change of the batch makes.
 */
function changeBox(
  boxes: RowChanges<BoxRecord, BoxPatch>,
  tenantId: string,
  boxId: string,
  onHandDelta: number,
  reservedDelta: number,
  warehouseId: string | null,
  status: string | null,
  updatedAt: string,
  changed: LogPosition,
): void {
  const row = boxes.createdRow(tenantId, boxId);
  if (row !== undefined) {
    row.onHand += onHandDelta;
    row.reserved += reservedDelta;
    if (warehouseId !== null) row.warehouseId = warehouseId;
    if (status !== null) row.status = status;
    row.updatedAt = updatedAt;
    row.changed = changed;
    return;
  }
  const patch = boxes.patchOf(tenantId, boxId);
  if (patch !== undefined) {
    patch.onHandDelta += onHandDelta;
    patch.reservedDelta += reservedDelta;
    if (warehouseId !== null) patch.warehouseId = warehouseId;
    if (status !== null) patch.status = status;
    patch.updatedAt = updatedAt;
    patch.changed = changed;
    return;
  }
  boxes.change(tenantId, boxId, { tenantId, boxId, onHandDelta, reservedDelta, warehouseId, status, updatedAt, changed });
}
