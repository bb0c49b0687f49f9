import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import {
  approvalBandOf,
  approvalBands,
  approvalPriority,
  averageHours,
  bucketStartMs,
  cycleStages,
  dayMs,
  exceptionPriorities,
  expiringPriority,
  expiryDetectedAt,
  expiryHorizon,
  lowStockPriority,
  totalCycleStage,
  utcDate,
  type ApprovalBand,
  type DayWindow,
  type MetricKey,
  type TrendGranularity,
} from '../../src/analytics/definitions.js';
import {
  compareBytes,
  mergeExceptionSources,
  type AnalyticsComputer,
  type BreakdownRow,
  type ComparisonResult,
  type ExceptionItem,
  type ExceptionsResult,
  type MetricParams,
  type MetricResult,
  type TrendResult,
} from '../../src/analytics/results.js';
import { sql } from '../../src/platform/sql.js';
import {
  comparisonRow,
  consumptionDayRow,
  countRow,
  cycleStageSumRow,
  discrepancyRow,
  expiringRow,
  lowStockRow,
  openDeliveryExceptionRow,
  pendingApprovalRow,
  sumRow,
  type ConsumptionDayRow,
} from './schema.js';

/**
 * The analytics figures from the `analytics` projection (views read_models.analytics_*), as
 * src/analytics/definitions.ts defines them. The caller runs every read of one answer in one
 * REPEATABLE READ transaction together with the projection's checkpoint. Every scan is bounded
 * by the cap it serves: an index gives the rows in the order the figure needs, and the scan
 * stops after cap + 1 of them.
 */
export function createAnalyticsReader(db: CommonQueryMethods, tenantId: string): AnalyticsComputer {
  const reads = readsOf(db, tenantId);
  // A plain object: callers spread it to wrap single methods.
  return {
    metric: (key, params, asOf) => metric(reads, key, params, asOf),
    exceptions: async ({ catalogItemId, cap }, asOf) => {
      // An item filter keeps the item's stock exceptions only (see ExceptionsParams).
      const sources: ExceptionItem[][] =
        catalogItemId === undefined
          ? [
              await reads.deliveryExceptions(cap + 1),
              await reads.expiring(asOf, cap + 1, undefined),
              await reads.lowStock(cap + 1, undefined),
              await reads.discrepancies(cap + 1),
              await reads.approvals(asOf, cap + 1),
            ]
          : [await reads.expiring(asOf, cap + 1, catalogItemId), await reads.lowStock(cap + 1, catalogItemId)];
      return mergeExceptionSources(sources, cap) satisfies ExceptionsResult;
    },
    comparison: async ({ cap }) => {
      const rows = await reads.clinics(cap + 1);
      return { truncated: rows.length > cap, clinics: rows.slice(0, cap) } satisfies ComparisonResult;
    },
    trend: async ({ window, granularity, cap }) => {
      const rows = await reads.consumptionDays(window, cap + 1);
      return { granularity, truncated: rows.length > cap, series: trendSeries(rows.slice(0, cap), window, granularity) } satisfies TrendResult;
    },
  };
}

type Reads = ReturnType<typeof readsOf>;

async function metric(reads: Reads, key: MetricKey, { window, caps }: MetricParams, asOf: string): Promise<MetricResult> {
  const capped = (count: number): MetricResult =>
    count <= caps.counts
      ? { metric: key, value: count, unit: 'count', breakdown: [], truncated: false }
      : { metric: key, value: caps.counts, unit: 'count', breakdown: [], truncated: true };
  switch (key) {
    case 'LOW_STOCK':
      return capped(await reads.lowStockCount(caps.counts + 1));
    case 'EXPIRING_STOCK':
      return capped(await reads.expiringCount(asOf, caps.counts + 1));
    case 'DELIVERY_EXCEPTIONS':
      return capped(await reads.deliveryExceptionCount(caps.counts + 1));
    case 'RECEIPT_DISCREPANCIES':
      return capped(await reads.discrepancyCount(caps.counts + 1));
    case 'PENDING_ORDERS':
      return { metric: key, value: await reads.pendingOrders(), unit: 'orders', breakdown: [], truncated: false };
    case 'APPROVAL_BACKLOG': {
      const rows = await reads.pendingApprovals(caps.backlog + 1);
      const counted = rows.slice(0, caps.backlog);
      const counts = new Map<ApprovalBand, number>();
      for (const row of counted) {
        const band = approvalBandOf(Date.parse(asOf) - Date.parse(row.pendingSince));
        counts.set(band, (counts.get(band) ?? 0) + 1);
      }
      const breakdown: BreakdownRow[] = approvalBands.map(({ band, minAgeHours, maxAgeHours }) => ({
        dimension: band,
        value: counts.get(band) ?? 0,
        unit: 'orders',
        minAgeHours,
        maxAgeHours,
      }));
      return { metric: key, value: counted.length, unit: 'orders', breakdown, truncated: rows.length > caps.backlog };
    }
    case 'ORDER_CYCLE_TIME': {
      const sums = await reads.cycleStageSums(requireWindow(key, window));
      const average = (stage: string): { value: number | null; samples: number } => {
        const sum = sums.get(stage) ?? { samples: 0, totalMs: 0 };
        return { value: averageHours(sum.totalMs, sum.samples), samples: sum.samples };
      };
      const breakdown: BreakdownRow[] = cycleStages.map(({ stage }) => ({ dimension: stage, ...average(stage), unit: 'hours' }));
      return { metric: key, value: average(totalCycleStage.stage).value, unit: 'hours', breakdown, truncated: false };
    }
    case 'CONSUMPTION_TREND': {
      const rows = await reads.consumptionDays(requireWindow(key, window), caps.trend + 1);
      const counted = rows.slice(0, caps.trend);
      const breakdown: BreakdownRow[] = [];
      let movements = 0;
      for (const { series, rows: seriesRows } of groupSeries(counted)) {
        movements += seriesRows.reduce((sum, row) => sum + row.movements, 0);
        const quantity = seriesRows.reduce((sum, row) => sum + row.quantity, 0);
        breakdown.push({ dimension: series.catalogItemId, value: quantity, unit: series.unit, name: series.name });
      }
      return { metric: key, value: movements, unit: 'movements', breakdown, truncated: rows.length > caps.trend };
    }
  }
}

function requireWindow(key: MetricKey, window: DayWindow | undefined): DayWindow {
  if (window === undefined) throw new Error(`${key} is computed over a window of days, and none was given`);
  return window;
}

/** Rows in (item, unit, day) order grouped by (item, unit), in that order. */
function groupSeries(rows: readonly ConsumptionDayRow[]): { series: ConsumptionDayRow; rows: ConsumptionDayRow[] }[] {
  const groups: { series: ConsumptionDayRow; rows: ConsumptionDayRow[] }[] = [];
  for (const row of rows) {
    const last = groups.at(-1);
    if (last !== undefined && last.series.catalogItemId === row.catalogItemId && last.series.unit === row.unit) last.rows.push(row);
    else groups.push({ series: row, rows: [row] });
  }
  return groups;
}

function trendSeries(rows: readonly ConsumptionDayRow[], window: DayWindow, granularity: TrendGranularity): TrendResult['series'] {
  const windowFrom = Date.parse(window.from);
  const windowTo = Date.parse(window.to);
  const bucketDays = granularity === 'day' ? 1 : 7;
  return groupSeries(rows).map(({ series, rows: seriesRows }) => {
    const points: TrendResult['series'][number]['points'] = [];
    let current: { start: number; point: TrendResult['series'][number]['points'][number] } | undefined;
    for (const row of seriesRows) {
      const start = bucketStartMs(Date.parse(`${row.day}T00:00:00.000Z`), granularity);
      if (current === undefined || current.start !== start) {
        current = {
          start,
          point: {
            periodStart: new Date(Math.max(start, windowFrom)).toISOString(),
            periodEnd: new Date(Math.min(start + bucketDays * dayMs, windowTo)).toISOString(),
            quantity: 0,
            movements: 0,
          },
        };
        points.push(current.point);
      }
      current.point.quantity += row.quantity;
      current.point.movements += row.movements;
    }
    return { catalogItemId: series.catalogItemId, name: series.name, unitOfMeasure: series.unit, points };
  });
}

/** The queries, each scoped to the tenant (every predicate starts with it). */
function readsOf(db: CommonQueryMethods, tenantId: string) {
  const count = async (rows: FragmentSqlToken): Promise<number> =>
    db.oneFirst(sql.type(countRow)`SELECT count(*)::int AS count FROM (${rows}) AS capped`);

  const lowStockRows = (limit: number, catalogItemId: string | undefined) => db.any(sql.type(lowStockRow)`
    SELECT l.catalog_item_id AS "catalogItemId", l.warehouse_id AS "warehouseId", l.available::float8 AS available,
      l.detected_at AS "detectedAt", i.reorder_point::float8 AS "reorderPoint", i.unit_of_measure AS "unitOfMeasure"
    FROM (
      SELECT catalog_item_id, warehouse_id, available, detected_at, priority
      FROM read_models.analytics_stock_levels
      WHERE tenant_id = ${tenantId} AND priority IS NOT NULL
        ${catalogItemId === undefined ? sql.fragment`` : sql.fragment`AND catalog_item_id = ${catalogItemId}`}
      ORDER BY priority DESC, detected_at, catalog_item_id, warehouse_id
      LIMIT ${limit}
    ) AS l
    JOIN read_models.analytics_items AS i ON i.tenant_id = ${tenantId} AND i.item_id = l.catalog_item_id
    ORDER BY l.priority DESC, l.detected_at, l.catalog_item_id, l.warehouse_id
  `);

  const expiringRows = (asOf: string, limit: number, catalogItemId: string | undefined) => db.any(sql.type(expiringRow)`
    SELECT b.box_id AS "boxId", b.catalog_item_id AS "catalogItemId", b.warehouse_id AS "warehouseId",
      to_char(b.expiring_on, 'YYYY-MM-DD') AS "expiresOn", b.on_hand::float8 AS "onHand", coalesce(i.unit_of_measure, '') AS "unitOfMeasure"
    FROM (
      SELECT box_id, catalog_item_id, warehouse_id, expiring_on, on_hand
      FROM read_models.analytics_boxes
      WHERE tenant_id = ${tenantId} AND expiring_on IS NOT NULL AND expiring_on <= ${expiryHorizon(asOf)}::date
        ${catalogItemId === undefined ? sql.fragment`` : sql.fragment`AND catalog_item_id = ${catalogItemId}`}
      ORDER BY expiring_on, box_id
      LIMIT ${limit}
    ) AS b
    LEFT JOIN read_models.analytics_items AS i ON i.tenant_id = ${tenantId} AND i.item_id = b.catalog_item_id
    ORDER BY b.expiring_on, b.box_id
  `);

  /** Orders pending approval, oldest first (ties by order id). */
  const pendingApprovals = (limit: number) =>
    db.any(sql.type(pendingApprovalRow)`
      SELECT order_id AS "orderId", number AS "orderNumber", clinic_id AS "clinicId", pending_since AS "pendingSince"
      FROM read_models.analytics_orders
      WHERE tenant_id = ${tenantId} AND pending_since IS NOT NULL
      ORDER BY pending_since, order_id
      LIMIT ${limit}
    `);

  return {
    lowStockCount: (limit: number) =>
      count(sql.fragment`SELECT 1 FROM read_models.analytics_stock_levels WHERE tenant_id = ${tenantId} AND priority IS NOT NULL LIMIT ${limit}`),

    expiringCount: (asOf: string, limit: number) =>
      count(sql.fragment`
        SELECT 1 FROM read_models.analytics_boxes
        WHERE tenant_id = ${tenantId} AND expiring_on IS NOT NULL AND expiring_on <= ${expiryHorizon(asOf)}::date
        LIMIT ${limit}
      `),

    deliveryExceptionCount: (limit: number) =>
      count(sql.fragment`SELECT 1 FROM read_models.analytics_delivery_exceptions WHERE tenant_id = ${tenantId} LIMIT ${limit}`),

    discrepancyCount: (limit: number) =>
      count(sql.fragment`SELECT 1 FROM read_models.analytics_receipt_discrepancies WHERE tenant_id = ${tenantId} LIMIT ${limit}`),

    /** Orders placed and not yet dispatched: the sum of the clinics' counters. */
    pendingOrders: () =>
      db.oneFirst(sql.type(sumRow)`
        SELECT coalesce(sum(pending_orders), 0)::float8 AS total FROM read_models.analytics_clinics WHERE tenant_id = ${tenantId}
      `),

    pendingApprovals,

    /** Samples and total duration of each stage over the window's days. */
    cycleStageSums: async (window: DayWindow) => {
      const rows = await db.any(sql.type(cycleStageSumRow)`
        SELECT stage, sum(samples)::float8 AS samples, sum(total_ms)::float8 AS "totalMs"
        FROM read_models.analytics_cycle_stages_daily
        WHERE tenant_id = ${tenantId} AND day >= ${utcDate(window.from)}::date AND day < ${utcDate(window.to)}::date
        GROUP BY stage
      `);
      return new Map(rows.map((row) => [row.stage, { samples: row.samples, totalMs: row.totalMs }]));
    },

    /**
     * Daily consumption rows of the window in (item, unit, day) order, at most `limit`: a loose
     * index scan walks the (item, unit) keys of the primary key and reads each key's days of the
     * window by range, so the scan reads the rows it returns and one probe per key. The nested
     * loop keeps the keys' order (no join or sort after it). Names are joined to the keys, not
     * to the rows: `named` (materialized, so that it is not inlined into every returned row)
     * joins the keys to the tenant's items once and sorts the keys back into order. Looked up per
     * returned row (a sequential scan of the small items table each time), the name cost about
     * 4 of 5.6 ms on the large seed's weekly window (462 rows, 78 keys); this way 0.2 ms.
     */
    consumptionDays: async (window: DayWindow, limit: number) =>
      inConsumptionOrder(await db.any(sql.type(consumptionDayRow)`
        WITH RECURSIVE series AS (
          (
            SELECT catalog_item_id, unit FROM read_models.analytics_consumption_daily
            WHERE tenant_id = ${tenantId}
            ORDER BY catalog_item_id, unit
            LIMIT 1
          )
          UNION ALL
          SELECT next.catalog_item_id, next.unit
          FROM series AS s
          CROSS JOIN LATERAL (
            SELECT c.catalog_item_id, c.unit FROM read_models.analytics_consumption_daily AS c
            WHERE c.tenant_id = ${tenantId} AND (c.catalog_item_id, c.unit) > (s.catalog_item_id, s.unit)
            ORDER BY c.catalog_item_id, c.unit
            LIMIT 1
          ) AS next
        ),
        named AS MATERIALIZED (
          SELECT s.catalog_item_id, s.unit, coalesce(i.name, s.catalog_item_id) AS name
          FROM series AS s
          LEFT JOIN read_models.analytics_items AS i ON i.tenant_id = ${tenantId} AND i.item_id = s.catalog_item_id
          ORDER BY s.catalog_item_id, s.unit
        )
        SELECT d.catalog_item_id AS "catalogItemId", d.unit, to_char(d.day, 'YYYY-MM-DD') AS day, d.quantity::float8 AS quantity,
          d.movements::float8 AS movements, s.name
        FROM named AS s
        CROSS JOIN LATERAL (
          SELECT c.catalog_item_id, c.unit, c.day, c.quantity, c.movements FROM read_models.analytics_consumption_daily AS c
          WHERE c.tenant_id = ${tenantId} AND c.catalog_item_id = s.catalog_item_id AND c.unit = s.unit
            AND c.day >= ${utcDate(window.from)}::date AND c.day < ${utcDate(window.to)}::date
          ORDER BY c.day
        ) AS d
        LIMIT ${limit}
      `)),

    /** Opened clinics by id (byte order). */
    clinics: (limit: number) =>
      db.any(sql.type(comparisonRow)`
        SELECT clinic_id AS "clinicId", name AS "clinicName", status AS "clinicStatus", total_orders::float8 AS "totalOrders",
          pending_approval_orders::float8 AS "pendingApprovalOrders"
        FROM read_models.analytics_clinics
        WHERE tenant_id = ${tenantId} AND name IS NOT NULL
        ORDER BY clinic_id
        LIMIT ${limit}
      `),

    // ── exceptions: each source's first `limit` rows in report order ──

    deliveryExceptions: async (limit: number): Promise<ExceptionItem[]> => {
      const rows = await db.any(sql.type(openDeliveryExceptionRow)`
        SELECT order_id AS "orderId", order_number AS "orderNumber", exception_id AS "exceptionId", reason_code AS "reasonCode",
          detected_at AS "detectedAt"
        FROM read_models.analytics_delivery_exceptions
        WHERE tenant_id = ${tenantId}
        ORDER BY detected_at, order_id, exception_id
        LIMIT ${limit}
      `);
      return rows.map(({ detectedAt, ...reference }) => ({
        metric: 'DELIVERY_EXCEPTIONS',
        priority: exceptionPriorities.deliveryException,
        drillDownType: 'fulfillment',
        drillDownId: reference.orderId,
        detectedAt,
        reference,
      }));
    },

    expiring: async (asOf: string, limit: number, catalogItemId: string | undefined): Promise<ExceptionItem[]> => {
      const rows = await expiringRows(asOf, limit, catalogItemId);
      return rows.map((reference) => ({
        metric: 'EXPIRING_STOCK',
        priority: expiringPriority(reference.expiresOn, asOf),
        drillDownType: 'box',
        drillDownId: reference.boxId,
        detectedAt: expiryDetectedAt(reference.expiresOn),
        reference,
      }));
    },

    lowStock: async (limit: number, catalogItemId: string | undefined): Promise<ExceptionItem[]> => {
      const rows = await lowStockRows(limit, catalogItemId);
      return rows.map(({ detectedAt, ...reference }) => ({
        metric: 'LOW_STOCK',
        priority: lowStockPriority(reference.available),
        drillDownType: 'catalog_item',
        drillDownId: reference.catalogItemId,
        detectedAt,
        reference,
      }));
    },

    discrepancies: async (limit: number): Promise<ExceptionItem[]> => {
      const rows = await db.any(sql.type(discrepancyRow)`
        SELECT order_id AS "orderId", order_number AS "orderNumber", line_id AS "lineId", catalog_item_id AS "catalogItemId",
          expected_qty::float8 AS "expectedQty", received_qty::float8 AS "receivedQty", reason_code AS "reasonCode", detected_at AS "detectedAt"
        FROM read_models.analytics_receipt_discrepancies
        WHERE tenant_id = ${tenantId}
        ORDER BY detected_at, order_id, line_id, reason_code, expected_qty, received_qty, entry_no
        LIMIT ${limit}
      `);
      return rows.map(({ detectedAt, ...reference }) => ({
        metric: 'RECEIPT_DISCREPANCIES',
        priority: exceptionPriorities.receiptDiscrepancy,
        drillDownType: 'fulfillment',
        drillDownId: reference.orderId,
        detectedAt,
        reference,
      }));
    },

    approvals: async (asOf: string, limit: number): Promise<ExceptionItem[]> => {
      const rows = await pendingApprovals(limit);
      return rows.map(({ pendingSince, ...order }) => ({
        metric: 'APPROVAL_BACKLOG',
        priority: approvalPriority(pendingSince, asOf),
        drillDownType: 'order',
        drillDownId: order.orderId,
        detectedAt: pendingSince,
        reference: { ...order, band: approvalBandOf(Date.parse(asOf) - Date.parse(pendingSince)) },
      }));
    },
  };
}

/**
 * The consumption scan relies on the nested loop returning rows in the order of its keys (an
 * ORDER BY would sort every row of the window before the cap). SQL does not promise that order,
 * so it is checked: a plan that ever broke it fails loudly instead of capping the wrong rows.
 */
function inConsumptionOrder<T extends { readonly catalogItemId: string; readonly unit: string; readonly day: string }>(rows: readonly T[]): readonly T[] {
  for (let i = 1; i < rows.length; i += 1) {
    const a = rows[i - 1] as T;
    const b = rows[i] as T;
    const order = compareBytes(a.catalogItemId, b.catalogItemId) || compareBytes(a.unit, b.unit) || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0);
    if (order >= 0) throw new Error('analytics consumption rows came out of (item, unit, day) order');
  }
  return rows;
}
