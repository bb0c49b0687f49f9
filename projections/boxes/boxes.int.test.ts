import type { FragmentSqlToken } from 'slonik';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventData } from '../../src/events/index.js';
import { slonikRowReader } from '../../src/platform/projectionReader.js';
import { createProjectionTestBed, event, otherTenant, rawEvent, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { boxesProjection } from './projection.js';
import { sql } from '../../src/platform/sql.js';
import { getBox, getBoxBalance, listBalances, type BalancePage } from './queries.js';
import { boxBalanceEntryRow } from './schema.js';

/** The balances of a page, each parsed from the JSON text the list sends. */
async function balances(tenantId: string, page: BalancePage) {
  return (await listBalances(slonikRowReader(bed.pool), tenantId, page)).map((entry) => JSON.parse(entry.balance) as unknown);
}

type Registration = EventData<'BoxRegistered'>;
type Movement = EventData<'StockMovementRecorded'>;

function registered(boxId: string, fields: Partial<Registration> = {}, tenantId = testTenant) {
  return event(
    'BoxRegistered',
    { boxId, code: `BX-${boxId}`, catalogItemId: 'item-gloves', warehouseId: 'w-central', status: 'active', origin: { type: 'purchase' }, ...fields },
    { tenantId },
  );
}

let movementCount = 0;
function moved(boxId: string, type: Movement['type'], quantityDelta: number, fields: Partial<Movement> = {}, tenantId = testTenant) {
  movementCount += 1;
  return event(
    'StockMovementRecorded',
    {
      movementId: `mov-${movementCount}`,
      type,
      boxId,
      catalogItemId: 'item-gloves',
      quantityDelta,
      actorId: 'member-ana',
      occurredAt: '2026-11-01T09:00:00.000Z',
      ...fields,
    },
    { tenantId },
  );
}

let bed: ProjectionTestBed;
beforeAll(async () => {
  bed = await createProjectionTestBed([boxesProjection]);
});
afterAll(async () => bed?.close());

describe('boxes projection', () => {
  it('given a registered box, returns its record with lot, serials, expiry and origin, and its latest status', async () => {
    await bed.project([
      registered('box-rec', {
        code: 'BX-7K2M-Q9PD',
        catalogItemId: 'item-implant',
        warehouseId: 'w-express',
        lot: 'L2510-4821',
        serials: ['IMP-000000003', 'IMP-000000001', 'IMP-000000002'],
        expiresOn: '2027-03-31',
        origin: { type: 'order', reference: 'order-17' },
      }),
      moved('box-rec', 'receive', 3, { catalogItemId: 'item-implant' }),
    ]);
    await bed.project([event('BoxStatusChanged', { boxId: 'box-rec', status: 'quarantined', reasonCode: 'recall' })]);

    expect(await getBox(bed.pool, testTenant, 'box-rec')).toEqual({
      boxId: 'box-rec',
      code: 'BX-7K2M-Q9PD',
      catalogItemId: 'item-implant',
      warehouseId: 'w-express',
      status: 'quarantined',
      lot: 'L2510-4821',
      serials: ['IMP-000000003', 'IMP-000000001', 'IMP-000000002'],
      expiresOn: '2027-03-31',
      origin: { type: 'order', reference: 'order-17' },
    });
  });

  it('given a box without lot, serials, expiry or origin reference, leaves those fields absent', async () => {
    await bed.project([registered('box-plain', { origin: { type: 'count' } })]);

    const box = await getBox(bed.pool, testTenant, 'box-plain');
    expect(box).toEqual({
      boxId: 'box-plain',
      code: 'BX-box-plain',
      catalogItemId: 'item-gloves',
      warehouseId: 'w-central',
      status: 'active',
      origin: { type: 'count' },
    });
    for (const field of ['lot', 'serials', 'expiresOn']) expect(Object.hasOwn(box ?? {}, field), field).toBe(false);
    expect(Object.hasOwn(box?.origin ?? {}, 'reference')).toBe(false);
    expect(await getBox(bed.pool, testTenant, 'box-unknown')).toBeUndefined();
    expect(await getBoxBalance(bed.pool, testTenant, 'box-unknown')).toBeUndefined();
  });

  it('given receive, reserve, release and issue movements, the balance follows onHand and reserved', async () => {
    await bed.project([registered('box-bal'), moved('box-bal', 'receive', 40)]);
    await bed.project([moved('box-bal', 'reserve', 0, { reservedDelta: 15 }), moved('box-bal', 'consume', -5)]);
    expect(await getBoxBalance(bed.pool, testTenant, 'box-bal')).toEqual({
      boxId: 'box-bal',
      catalogItemId: 'item-gloves',
      warehouseId: 'w-central',
      onHand: 35,
      reserved: 15,
      available: 20,
    });

    await bed.project([
      moved('box-bal', 'release', 0, { reservedDelta: -5 }),
      // An issue names both warehouses, yet the box stays where it is.
      moved('box-bal', 'issue', -10, { reservedDelta: -10, fromWarehouseId: 'w-central', toWarehouseId: 'w-express' }),
    ]);
    expect(await getBoxBalance(bed.pool, testTenant, 'box-bal')).toEqual({
      boxId: 'box-bal',
      catalogItemId: 'item-gloves',
      warehouseId: 'w-central',
      onHand: 25,
      reserved: 0,
      available: 25,
    });
  });

  it('given a transfer, lists the box under its new warehouse only', async () => {
    await bed.project([
      registered('box-trf', { catalogItemId: 'item-trf', warehouseId: 'w-trf-from' }),
      moved('box-trf', 'receive', 12, { catalogItemId: 'item-trf' }),
    ]);
    await bed.project([
      moved('box-trf', 'transfer', 0, { catalogItemId: 'item-trf', fromWarehouseId: 'w-trf-from', toWarehouseId: 'w-trf-to', reasonCode: 'rebalance' }),
    ]);

    const expected = { boxId: 'box-trf', catalogItemId: 'item-trf', warehouseId: 'w-trf-to', onHand: 12, reserved: 0, available: 12 };
    expect(await balances(testTenant, { limit: 50, warehouseId: 'w-trf-to' })).toEqual([expected]);
    expect(await balances(testTenant, { limit: 50, warehouseId: 'w-trf-from' })).toEqual([]);
    expect(await balances(testTenant, { limit: 50, catalogItemId: 'item-trf' })).toEqual([expected]);
    expect(await balances(testTenant, { limit: 50, catalogItemId: 'item-trf', warehouseId: 'w-trf-to' })).toEqual([expected]);
    expect((await getBox(bed.pool, testTenant, 'box-trf'))?.warehouseId).toBe('w-trf-to');
  });

  it('given filters that match nothing, returns an empty list', async () => {
    const tenantId = 'tenant-filters';
    await bed.project([
      registered('box-flt', { catalogItemId: 'item-flt', warehouseId: 'w-central' }, tenantId),
      registered('box-flt-moved', { catalogItemId: 'item-flt', warehouseId: 'w-central' }, tenantId),
      moved('box-flt-moved', 'transfer', 0, { catalogItemId: 'item-flt', fromWarehouseId: 'w-central', toWarehouseId: 'w-away' }, tenantId),
    ]);
    expect((await listBalances(slonikRowReader(bed.pool), tenantId, { limit: 50, catalogItemId: 'item-flt', warehouseId: 'w-central' })).map((entry) => entry.boxId)).toEqual(['box-flt']);
    expect(await balances(tenantId, { limit: 50, warehouseId: 'w-nowhere' })).toEqual([]);
    expect(await balances(tenantId, { limit: 50, catalogItemId: 'item-nothing' })).toEqual([]);
    expect(await balances(tenantId, { limit: 50, catalogItemId: 'item-flt', warehouseId: 'w-elsewhere' })).toEqual([]);
  });

  it('pages balances by box id in byte order, limit + 1 rows a page, with no repeats', async () => {
    // Byte order puts upper case before "_" before lower case, unlike most locales.
    const ids = ['pg-b', 'pg-A', 'pg-_', 'pg-a', 'pg-B'];
    await bed.project(ids.map((boxId) => registered(boxId, { warehouseId: 'w-pages' })));

    const pages: string[][] = [];
    let afterBoxId: string | undefined;
    for (;;) {
      const rows = await listBalances(slonikRowReader(bed.pool), testTenant, { limit: 2, warehouseId: 'w-pages', ...(afterBoxId === undefined ? {} : { afterBoxId }) });
      const page = rows.slice(0, 2).map((row) => row.boxId);
      pages.push(page);
      if (rows.length <= 2) break;
      afterBoxId = page.at(-1);
    }
    expect(pages).toEqual([['pg-A', 'pg-B'], ['pg-_', 'pg-a'], ['pg-b']]);
  });

  it('keeps tenants apart, even under the same box id', async () => {
    await bed.project([
      registered('box-shared', { warehouseId: 'w-a' }),
      moved('box-shared', 'receive', 5),
      registered('box-shared', { warehouseId: 'w-b', catalogItemId: 'item-b' }, otherTenant),
      moved('box-shared', 'receive', 9, { catalogItemId: 'item-b' }, otherTenant),
      registered('box-only-b', { warehouseId: 'w-b', catalogItemId: 'item-b' }, otherTenant),
    ]);

    expect(await getBoxBalance(bed.pool, testTenant, 'box-shared')).toMatchObject({ warehouseId: 'w-a', onHand: 5 });
    expect(await getBoxBalance(bed.pool, otherTenant, 'box-shared')).toMatchObject({ warehouseId: 'w-b', onHand: 9 });
    expect(await getBox(bed.pool, testTenant, 'box-only-b')).toBeUndefined();
    expect(await getBoxBalance(bed.pool, testTenant, 'box-only-b')).toBeUndefined();
    expect((await listBalances(slonikRowReader(bed.pool), otherTenant, { limit: 50 })).map((entry) => entry.boxId)).toEqual(['box-only-b', 'box-shared']);
    expect(await balances(testTenant, { limit: 50, warehouseId: 'w-b' })).toEqual([]);
  });

  it('dead-letters movements and status changes of unregistered boxes, a second registration and a broken event, and applies the rest', async () => {
    await bed.project([registered('box-dl'), moved('box-dl', 'receive', 10)]);
    const letters = await bed.project([
      moved('box-dl', 'consume', -1),
      moved('box-ghost', 'receive', 4),
      event('BoxStatusChanged', { boxId: 'box-ghost', status: 'disposed' }),
      registered('box-dl', { warehouseId: 'w-elsewhere' }),
      rawEvent('BoxRegistered', { boxId: 'box-bad' }),
      registered('box-dl-2'),
      moved('box-dl-2', 'receive', 3),
      moved('box-dl', 'consume', -2),
    ]);

    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['StockMovementRecorded', 'boxes'],
      ['BoxStatusChanged', 'boxes'],
      ['BoxRegistered', 'boxes'],
      ['BoxRegistered', 'boxes'],
    ]);
    expect(letters[0]?.error).toMatch(/1 row\(s\) expected, 0 found/);
    expect(letters[1]?.error).toMatch(/1 row\(s\) expected, 0 found/);
    expect(letters[2]?.error).toMatch(/box registration/);
    expect(await getBoxBalance(bed.pool, testTenant, 'box-dl')).toMatchObject({ warehouseId: 'w-central', onHand: 7 });
    expect(await getBoxBalance(bed.pool, testTenant, 'box-dl-2')).toMatchObject({ onHand: 3 });
    expect(await getBox(bed.pool, testTenant, 'box-ghost')).toBeUndefined();
  });

  it('folds a box registered and changed within one batch like one event at a time', async () => {
    await bed.project(
      [
        registered('box-mix', { warehouseId: 'w-1' }),
        moved('box-mix', 'receive', 20),
        moved('box-mix', 'transfer', 0, { fromWarehouseId: 'w-1', toWarehouseId: 'w-2' }),
        moved('box-mix', 'reserve', 0, { reservedDelta: 6 }),
        event('BoxStatusChanged', { boxId: 'box-mix', status: 'quarantined' }),
        moved('box-mix', 'transfer', 0, { fromWarehouseId: 'w-2', toWarehouseId: 'w-3' }),
        moved('box-mix', 'consume', -4),
        event('BoxStatusChanged', { boxId: 'box-mix', status: 'active' }),
        moved('box-mix', 'release', 0, { reservedDelta: -2 }),
      ],
      { batchSize: 4 },
    );
    expect(await getBoxBalance(bed.pool, testTenant, 'box-mix')).toEqual({
      boxId: 'box-mix',
      catalogItemId: 'item-gloves',
      warehouseId: 'w-3',
      onHand: 16,
      reserved: 4,
      available: 12,
    });
    expect((await getBox(bed.pool, testTenant, 'box-mix'))?.status).toBe('active');
  });

  it('stores each balance as the JSON text JSON.stringify makes of it, whatever characters its ids hold', async () => {
    const odd = ['box-"quoted"', 'box-back\\slash', 'box-ctl\u0001\u001f\t\n', 'box-ünï-😀-\u2028', 'box-/<script>'];
    await bed.project(
      odd.flatMap((boxId, index) => [
        registered(boxId, { catalogItemId: `item-"${index}"\\`, warehouseId: `w-odd-${'\u007f'}` }),
        moved(boxId, 'receive', 7 + index, { catalogItemId: `item-"${index}"\\` }),
        moved(boxId, 'reserve', 0, { catalogItemId: `item-"${index}"\\`, reservedDelta: 9 + index }),
      ]),
    );
    const entries = await listBalances(slonikRowReader(bed.pool), testTenant, { limit: 50, warehouseId: 'w-odd-\u007f' });
    expect(entries.map((entry) => entry.boxId)).toEqual([...odd].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)));
    for (const entry of entries) {
      // Byte for byte the serialisation of the balance read from the columns (available < 0 here).
      expect(entry.balance).toBe(JSON.stringify(await getBoxBalance(bed.pool, testTenant, entry.boxId)));
      expect(JSON.parse(entry.balance)).toMatchObject({ available: -2 });
    }
    // The row check refuses a text that is not exactly that serialisation.
    const spaced = entries[0]?.balance.replace(',', ', ') ?? '';
    expect(boxBalanceEntryRow.safeParse({ boxId: 'x', balance: spaced }).success).toBe(false);
    expect(boxBalanceEntryRow.safeParse({ boxId: 'x', balance: JSON.stringify({ ...JSON.parse(entries[0]?.balance ?? '{}'), extra: 1 }) }).success).toBe(false);
  });

  it('gives the same tables one event at a time as in batches', async () => {
    // Its own events, so the comparison covers registrations, movements and status changes whatever ran before.
    const tenantId = 'tenant-digest';
    await bed.project(
      [
        registered('box-dg-1', { lot: 'L-1', serials: ['S-2', 'S-1'], expiresOn: '2027-03-31' }, tenantId),
        registered('box-dg-2', { warehouseId: 'w-1' }, tenantId),
        moved('box-dg-1', 'receive', 20, {}, tenantId),
        moved('box-dg-2', 'receive', 8, {}, tenantId),
        moved('box-dg-1', 'reserve', 0, { reservedDelta: 6 }, tenantId),
        moved('box-dg-2', 'transfer', 0, { fromWarehouseId: 'w-1', toWarehouseId: 'w-2' }, tenantId),
        event('BoxStatusChanged', { boxId: 'box-dg-2', status: 'quarantined' }, { tenantId }),
        moved('box-dg-1', 'consume', -3, {}, tenantId),
      ],
      { batchSize: 3 },
    );
    for (const row of await bed.oneByOneDigestsMatch()) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});

describe('balances of a generation built before balance_json (boxes version 1)', () => {
  const columns = sql.fragment`tenant_id, box_id, code, catalog_item_id, warehouse_id, status, lot, serials,
    expires_on, origin_type, origin_reference, on_hand, reserved, registered_at, updated_at`;
  const replaceView = async (extra: FragmentSqlToken) => {
    await bed.pool.query(sql.typeAlias('void')`DROP VIEW IF EXISTS read_models.boxes`);
    await bed.pool.query(sql.typeAlias('void')`CREATE VIEW read_models.boxes AS SELECT ${columns} ${extra} FROM read_models.boxes_current`);
  };

  it('reads the page from the columns, with the same text, and tries the stored JSON again after a few seconds', async () => {
    const tenantId = 'tenant-version-1';
    const boxIds = ['v1-a', 'v1-b', 'v1-c', 'v1-d', 'v1-e', 'v1-f'];
    await bed.project(boxIds.flatMap((boxId, index) => [registered(boxId, {}, tenantId), moved(boxId, 'receive', 10 + index, {}, tenantId)]));
    const page = { limit: 50 } as const;
    const list = () => listBalances(slonikRowReader(bed.pool), tenantId, page);
    const stored = await list();
    expect(stored.map((entry) => entry.boxId)).toEqual(boxIds);
    await bed.pool.query(sql.typeAlias('void')`ALTER VIEW read_models.boxes RENAME TO boxes_current`);
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
    try {
      // What the view of a version-1 generation shows: every column but balance_json.
      await replaceView(sql.fragment``);
      expect(await list()).toEqual(stored);
      // The generation switches (here: a balance_json that says so); within the next seconds
      // the page still comes from the columns, then from the stored text.
      await replaceView(sql.fragment`, replace(balance_json, ',"catalogItemId":"', ',"catalogItemId":"switched-') AS balance_json`);
      clock.mockReturnValue(now + 4_000);
      expect(await list()).toEqual(stored);
      clock.mockReturnValue(now + 6_000);
      const switched = await list();
      expect(switched.map((entry) => entry.boxId)).toEqual(stored.map((entry) => entry.boxId));
      for (const entry of switched) expect(JSON.parse(entry.balance)).toMatchObject({ catalogItemId: expect.stringMatching(/^switched-/) as unknown });
    } finally {
      clock.mockRestore();
      await bed.pool.query(sql.typeAlias('void')`DROP VIEW IF EXISTS read_models.boxes`);
      await bed.pool.query(sql.typeAlias('void')`ALTER VIEW read_models.boxes_current RENAME TO boxes`);
    }
  });
});
