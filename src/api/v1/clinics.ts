import { listClinics, listWarehouses } from '../../../projections/locations/queries.js';
import { clinicRow, warehouseRow } from '../../../projections/locations/schema.js';
import { terminalPage } from '../pagination/page.js';
import { defineOperation } from './operation.js';
import { listEnvelope } from './parameters.js';

export const listClinicsOperation = defineOperation({
  operationId: 'listClinics',
  method: 'get',
  path: '/v1/clinics',
  tag: 'Locations',
  summary: 'List clinics (locations)',
  description: 'Every clinic of the workspace, by clinic id; one terminal page (`limit` and `cursor` are ignored).',
  scope: 'clinics:read',
  response: listEnvelope(clinicRow.strict().openapi('Clinic')),
  responseName: 'ClinicList',
  problems: [],
  handle: async ({ db, principal }) => terminalPage(await listClinics(db, principal.tenantId)),
});

export const listWarehousesOperation = defineOperation({
  operationId: 'listWarehouses',
  method: 'get',
  path: '/v1/warehouses',
  tag: 'Locations',
  summary: 'List warehouses',
  description:
    'Every warehouse of the workspace, by warehouse id; one terminal page. A `central` warehouse serves the whole organisation; an `express` warehouse belongs to one clinic (`clinicId`).',
  scope: 'clinics:read',
  response: listEnvelope(warehouseRow.strict().openapi('Warehouse')),
  responseName: 'WarehouseList',
  problems: [],
  handle: async ({ db, principal }) => terminalPage(await listWarehouses(db, principal.tenantId)),
});
