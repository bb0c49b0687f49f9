import { sql } from '../../src/platform/sql.js';
import type { TableDefinition } from '../../src/projecting/projection.js';

/** The analytics read tables and the indexes a rebuild creates after its load. */
export const analyticsTables: readonly TableDefinition[] = [
  {
    name: 'analytics_items',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_items')} (
          tenant_id text COLLATE "C" NOT NULL,
          item_id text COLLATE "C" NOT NULL,
          name text NOT NULL,
          unit_of_measure text NOT NULL,
          reorder_point bigint NOT NULL,
          status text NOT NULL,
          PRIMARY KEY (tenant_id, item_id)
        )
      `,
    ],
  },
  {
    name: 'analytics_warehouses',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_warehouses')} (
          tenant_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          PRIMARY KEY (tenant_id, warehouse_id)
        )
      `,
    ],
  },
  {
    name: 'analytics_clinics',
    create: (table) => [
      // name and status stay null until ClinicOpened: orders may name a clinic before it opens.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_clinics')} (
          tenant_id text COLLATE "C" NOT NULL,
          clinic_id text COLLATE "C" NOT NULL,
          name text,
          status text,
          total_orders bigint NOT NULL,
          pending_approval_orders bigint NOT NULL,
          pending_orders bigint NOT NULL,
          PRIMARY KEY (tenant_id, clinic_id)
        )
      `,
    ],
    // The clinic comparison: opened clinics by id.
    deferredIndexes: (table) => [sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_clinics')} (tenant_id, clinic_id) WHERE name IS NOT NULL`],
  },
  {
    name: 'analytics_boxes',
    // Boxes, levels and orders change many times each (every movement, every status): half-full
    // pages keep those updates on their page (HOT), without a new index entry for each.
    create: (table) => [
      // expiring_on: expires_on while the box counts for EXPIRING_STOCK (onHand > 0, status not
      // ignored), null otherwise.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_boxes')} (
          tenant_id text COLLATE "C" NOT NULL,
          box_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          on_hand bigint NOT NULL,
          reserved bigint NOT NULL,
          expires_on date,
          expiring_on date,
          PRIMARY KEY (tenant_id, box_id)
        ) WITH (fillfactor = 50)
      `,
    ],
    // EXPIRING_STOCK and its exceptions, in report order (expiry date, then box id).
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_boxes')} (tenant_id, expiring_on, box_id) WHERE expiring_on IS NOT NULL`,
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_boxes')} (tenant_id, catalog_item_id, expiring_on, box_id) WHERE expiring_on IS NOT NULL`,
    ],
  },
  {
    name: 'analytics_stock_levels',
    create: (table) => [
      // detected_at and priority are set exactly while the level is low.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_stock_levels')} (
          tenant_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          warehouse_id text COLLATE "C" NOT NULL,
          available bigint NOT NULL,
          detected_at timestamptz,
          priority smallint,
          PRIMARY KEY (tenant_id, catalog_item_id, warehouse_id)
        ) WITH (fillfactor = 50)
      `,
      // A warehouse status change re-evaluates every level of the warehouse.
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_stock_levels')} (tenant_id, warehouse_id, catalog_item_id)`,
    ],
    // LOW_STOCK and its exceptions, in report order.
    deferredIndexes: (table) => [
      sql.typeAlias('void')`
        CREATE INDEX ON ${table('analytics_stock_levels')} (tenant_id, priority DESC, detected_at, catalog_item_id, warehouse_id)
        WHERE priority IS NOT NULL
      `,
      sql.typeAlias('void')`
        CREATE INDEX ON ${table('analytics_stock_levels')} (tenant_id, catalog_item_id, priority DESC, detected_at, warehouse_id)
        WHERE priority IS NOT NULL
      `,
    ],
  },
  {
    name: 'analytics_orders',
    create: (table) => [
      // pending_since is set exactly while the order is pending_approval.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_orders')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          number integer NOT NULL,
          clinic_id text COLLATE "C" NOT NULL,
          status text NOT NULL,
          pending_since timestamptz,
          submitted_at timestamptz,
          approved_at timestamptz,
          dispatched_at timestamptz,
          delivered_at timestamptz,
          received_at timestamptz,
          PRIMARY KEY (tenant_id, order_id)
        ) WITH (fillfactor = 50)
      `,
    ],
    // APPROVAL_BACKLOG and the approvals of the exceptions report, oldest first.
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_orders')} (tenant_id, pending_since, order_id) WHERE pending_since IS NOT NULL`,
    ],
  },
  {
    name: 'analytics_consumption_daily',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_consumption_daily')} (
          tenant_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          unit text COLLATE "C" NOT NULL,
          day date NOT NULL,
          quantity bigint NOT NULL,
          movements bigint NOT NULL,
          PRIMARY KEY (tenant_id, catalog_item_id, unit, day)
        )
      `,
    ],
  },
  {
    name: 'analytics_cycle_stages_daily',
    create: (table) => [
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_cycle_stages_daily')} (
          tenant_id text COLLATE "C" NOT NULL,
          day date NOT NULL,
          stage text COLLATE "C" NOT NULL,
          samples bigint NOT NULL,
          total_ms bigint NOT NULL,
          PRIMARY KEY (tenant_id, day, stage)
        )
      `,
    ],
  },
  {
    name: 'analytics_delivery_exceptions',
    create: (table) => [
      // Open exceptions only: a resolved one is deleted.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_delivery_exceptions')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          exception_id text COLLATE "C" NOT NULL,
          order_number integer NOT NULL,
          reason_code text NOT NULL,
          detected_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, order_id, exception_id)
        )
      `,
    ],
    deferredIndexes: (table) => [
      sql.typeAlias('void')`CREATE INDEX ON ${table('analytics_delivery_exceptions')} (tenant_id, detected_at, order_id, exception_id)`,
    ],
  },
  {
    name: 'analytics_receipt_discrepancies',
    create: (table) => [
      // Open discrepancies only: entry_no is the position in FulfillmentReceived.discrepancies.
      sql.typeAlias('void')`
        CREATE TABLE ${table('analytics_receipt_discrepancies')} (
          tenant_id text COLLATE "C" NOT NULL,
          order_id text COLLATE "C" NOT NULL,
          entry_no integer NOT NULL,
          order_number integer NOT NULL,
          line_id text COLLATE "C" NOT NULL,
          catalog_item_id text COLLATE "C" NOT NULL,
          expected_qty bigint NOT NULL,
          received_qty bigint NOT NULL,
          reason_code text COLLATE "C" NOT NULL,
          detected_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, order_id, entry_no)
        )
      `,
    ],
    deferredIndexes: (table) => [
      sql.typeAlias('void')`
        CREATE INDEX ON ${table('analytics_receipt_discrepancies')} (tenant_id, detected_at, order_id, line_id, reason_code, entry_no)
      `,
    ],
  },
];
