import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectionTestBed, event, otherTenant, rawEvent, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { locationsProjection } from './projection.js';
import { listClinics, listWarehouses } from './queries.js';

describe('locations projection', () => {
  let bed: ProjectionTestBed;
  beforeAll(async () => {
    bed = await createProjectionTestBed([locationsProjection]);
  });
  afterAll(async () => bed?.close());

  it('given clinics opened, renamed and closed, lists each once with its latest name and status', async () => {
    await bed.project([
      event('ClinicOpened', { clinicId: 'c-2', name: 'Norte', status: 'active' }),
      event('ClinicOpened', { clinicId: 'c-1', name: 'Centro', status: 'active' }),
      event('ClinicRenamed', { clinicId: 'c-1', name: 'Centro Histórico' }),
      event('ClinicOpened', { clinicId: 'c-9', name: 'Other tenant', status: 'active' }, { tenantId: otherTenant }),
    ]);
    await bed.project([event('ClinicStatusChanged', { clinicId: 'c-2', status: 'closed' }), event('ClinicRenamed', { clinicId: 'c-2', name: 'Norte (old)' })]);

    expect(await listClinics(bed.pool, testTenant)).toEqual([
      { clinicId: 'c-1', name: 'Centro Histórico', status: 'active' },
      { clinicId: 'c-2', name: 'Norte (old)', status: 'closed' },
    ]);
    expect(await listClinics(bed.pool, otherTenant)).toEqual([{ clinicId: 'c-9', name: 'Other tenant', status: 'active' }]);
  });

  it('given warehouses, lists them with clinicId only for express ones', async () => {
    await bed.project([
      event('WarehouseOpened', { warehouseId: 'w-central', name: 'Central', kind: 'central', status: 'active' }),
      event('WarehouseOpened', { warehouseId: 'w-express', name: 'Express Centro', kind: 'express', clinicId: 'c-1', status: 'active' }),
      event('WarehouseStatusChanged', { warehouseId: 'w-express', status: 'inactive' }),
    ]);
    const warehouses = await listWarehouses(bed.pool, testTenant);
    expect(warehouses).toEqual([
      { warehouseId: 'w-central', name: 'Central', kind: 'central', status: 'active' },
      { warehouseId: 'w-express', name: 'Express Centro', kind: 'express', clinicId: 'c-1', status: 'inactive' },
    ]);
    expect(Object.hasOwn(warehouses[0] ?? {}, 'clinicId')).toBe(false);
  });

  it('dead-letters a change to a clinic that was never opened and an event that breaks its schema, and applies the rest', async () => {
    // A tenant of its own, so the list below is this test's clinics whatever ran before.
    const tenantId = 'tenant-dead-letters';
    const letters = await bed.project([
      event('ClinicOpened', { clinicId: 'c-1', name: 'Centro', status: 'active' }, { tenantId }),
      event('ClinicRenamed', { clinicId: 'c-missing', name: 'Ghost' }, { tenantId }),
      rawEvent('ClinicOpened', { clinicId: 'c-bad' }, tenantId),
      event('ClinicOpened', { clinicId: 'c-3', name: 'Sur', status: 'active' }, { tenantId }),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['ClinicRenamed', 'locations'],
      ['ClinicOpened', 'locations'],
    ]);
    expect(letters[0]?.error).toMatch(/1 row\(s\) expected, 0 found/);
    expect((await listClinics(bed.pool, tenantId)).map((c) => c.clinicId)).toEqual(['c-1', 'c-3']);
  });

  it('gives the same tables one event at a time as in batches', async () => {
    // Its own events, so the comparison covers clinics and warehouses whatever ran before.
    const t = { tenantId: 'tenant-digest' };
    await bed.project(
      [
        event('ClinicOpened', { clinicId: 'c-1', name: 'Centro', status: 'active' }, t),
        event('ClinicRenamed', { clinicId: 'c-1', name: 'Centro Histórico' }, t),
        event('ClinicStatusChanged', { clinicId: 'c-1', status: 'closed' }, t),
        event('WarehouseOpened', { warehouseId: 'w-central', name: 'Central', kind: 'central', status: 'active' }, t),
        event('WarehouseOpened', { warehouseId: 'w-express', name: 'Express Centro', kind: 'express', clinicId: 'c-1', status: 'active' }, t),
        event('WarehouseStatusChanged', { warehouseId: 'w-express', status: 'inactive' }, t),
      ],
      { batchSize: 4 },
    );
    for (const row of await bed.oneByOneDigestsMatch()) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
