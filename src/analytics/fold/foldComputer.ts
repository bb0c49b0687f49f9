import { isoUtc } from '../../platform/clock.js';
import {
  approvalBandOf,
  approvalBands,
  approvalPriority,
  averageHours,
  bucketStartMs,
  cycleStages,
  dayMs,
  defaultWindow,
  exceptionPriorities,
  expiringPriority,
  expiryDetectedAt,
  expiryHorizon,
  expiryIgnoredBoxStatuses,
  lowStockPriority,
  pendingOrderStatuses,
  totalCycleStage,
  type CycleStage,
  type DayWindow,
  type MetricKey,
} from '../definitions.js';
import {
  compareBytes,
  compareExceptions,
  mergeExceptionSources,
  type AnalyticsComputer,
  type BreakdownRow,
  type ComparisonResult,
  type ExceptionItem,
  type ExceptionsResult,
  type MetricResult,
  type TrendResult,
} from '../results.js';
import { type AnalyticsFoldState, type ConsumptionDay, type OrderFoldState } from './analyticsFold.js';

/**
 * The figures of a folded state (see analyticsFold.ts), computed with the same caps and orders as
 * the projection's reader so that both give the same results as canonical JSON.
 */
export function createFoldComputer(state: AnalyticsFoldState, tenantId: string): AnalyticsComputer {
  if (state.tenantId !== tenantId) throw new Error(`the fold state is tenant ${state.tenantId}'s, not ${tenantId}'s`);
  return {
    metric: async (key, params, asOf) => metric(state, key, params.caps, params.window, asOf),
    exceptions: async ({ catalogItemId, cap }, asOf) => exceptions(state, catalogItemId, cap, asOf),
    comparison: async ({ cap }) => comparison(state, cap),
    trend: async ({ window, granularity, cap }) => {
      const { rows, truncated } = consumptionRows(state, window, cap);
      const from = Date.parse(window.from);
      const to = Date.parse(window.to);
      const series: TrendResult['series'] = [];
      for (const group of groupByItemAndUnit(rows)) {
        const points = new Map<number, { quantity: number; movements: number }>();
        for (const row of group.rows) {
          const start = bucketStartMs(Date.parse(`${row.day}T00:00:00.000Z`), granularity);
          const point = points.get(start) ?? { quantity: 0, movements: 0 };
          point.quantity += row.quantity;
          point.movements += row.movements;
          points.set(start, point);
        }
        const length = granularity === 'day' ? dayMs : 7 * dayMs;
        series.push({
          catalogItemId: group.catalogItemId,
          name: itemName(state, group.catalogItemId),
          unitOfMeasure: group.unitOfMeasure,
          points: [...points]
            .map(([start, point]) => ({ start: Math.max(start, from), end: Math.min(start + length, to), ...point }))
            .sort((a, b) => a.start - b.start)
            .map(({ start, end, quantity, movements }) => ({
              periodStart: isoUtc(start),
              periodEnd: isoUtc(end),
              quantity,
              movements,
            })),
        });
      }
      return { granularity, truncated, series };
    },
  };
}

function metric(
  state: AnalyticsFoldState,
  key: MetricKey,
  caps: { readonly counts: number; readonly backlog: number; readonly trend: number },
  window: DayWindow | undefined,
  asOf: string,
): MetricResult {
  const capped = (n: number): MetricResult =>
    n <= caps.counts
      ? { metric: key, value: n, unit: 'count', breakdown: [], truncated: false }
      : { metric: key, value: caps.counts, unit: 'count', breakdown: [], truncated: true };
  switch (key) {
    case 'LOW_STOCK':
      return capped(lowStockItems(state, undefined).length);
    case 'EXPIRING_STOCK':
      return capped(expiringItems(state, undefined, asOf).length);
    case 'DELIVERY_EXCEPTIONS':
      return capped(state.openDeliveryExceptions.size);
    case 'RECEIPT_DISCREPANCIES':
      return capped(discrepancyItems(state).length);
    case 'PENDING_ORDERS': {
      let n = 0;
      for (const order of state.orders.values()) if (pendingOrderStatuses.includes(order.status)) n += 1;
      return { metric: key, value: n, unit: 'orders', breakdown: [], truncated: false };
    }
    case 'APPROVAL_BACKLOG': {
      const pending = pendingApprovals(state);
      const read = pending.slice(0, caps.backlog);
      const counts = new Map<string, number>();
      for (const order of read) {
        const band = approvalBandOf(Date.parse(asOf) - Date.parse(order.pendingSince));
        counts.set(band, (counts.get(band) ?? 0) + 1);
      }
      return {
        metric: key,
        value: read.length,
        unit: 'orders',
        breakdown: approvalBands.map((band) => ({
          dimension: band.band,
          value: counts.get(band.band) ?? 0,
          unit: 'orders',
          minAgeHours: band.minAgeHours,
          maxAgeHours: band.maxAgeHours,
        })),
        truncated: pending.length > caps.backlog,
      };
    }
    case 'ORDER_CYCLE_TIME': {
      const w = window ?? defaultWindow(asOf);
      const average = (stage: CycleStage): { value: number | null; samples: number } => {
        let totalMs = 0;
        let samples = 0;
        for (const [day, totals] of state.cycleSamples.get(stage) ?? []) {
          if (!dayInWindow(day, w)) continue;
          totalMs += totals.totalMs;
          samples += totals.samples;
        }
        return { value: averageHours(totalMs, samples), samples };
      };
      return {
        metric: key,
        value: average(totalCycleStage.stage).value,
        unit: 'hours',
        breakdown: cycleStages.map(({ stage }) => {
          const { value, samples } = average(stage);
          return { dimension: stage, value, unit: 'hours', samples };
        }),
        truncated: false,
      };
    }
    case 'CONSUMPTION_TREND': {
      const { rows, truncated } = consumptionRows(state, window ?? defaultWindow(asOf), caps.trend);
      const breakdown: BreakdownRow[] = groupByItemAndUnit(rows).map((group) => ({
        dimension: group.catalogItemId,
        value: group.rows.reduce((sum, row) => sum + row.quantity, 0),
        unit: group.unitOfMeasure,
        name: itemName(state, group.catalogItemId),
      }));
      return {
        metric: key,
        value: rows.reduce((sum, row) => sum + row.movements, 0),
        unit: 'movements',
        breakdown,
        truncated,
      };
    }
  }
  throw new Error(`unknown metric ${String(key)}`);
}

function exceptions(state: AnalyticsFoldState, catalogItemId: string | undefined, cap: number, asOf: string): ExceptionsResult {
  const stock = [expiringItems(state, catalogItemId, asOf), lowStockItems(state, catalogItemId)];
  // An item filter keeps the item's stock exceptions only (see ExceptionsParams).
  const sources = (catalogItemId === undefined ? [deliveryExceptionItems(state), ...stock, discrepancyItems(state), approvalItems(state, asOf)] : stock).map(
    (items) => items.sort(compareExceptions).slice(0, cap + 1),
  );
  return mergeExceptionSources(sources, cap);
}

function comparison(state: AnalyticsFoldState, cap: number): ComparisonResult {
  const pendingByClinic = new Map<string, number>();
  for (const order of state.orders.values()) {
    if (order.status === 'pending_approval') pendingByClinic.set(order.clinicId, (pendingByClinic.get(order.clinicId) ?? 0) + 1);
  }
  const clinics = [...state.clinics]
    .sort(([a], [b]) => compareBytes(a, b))
    .map(([clinicId, clinic]) => ({
      clinicId,
      clinicName: clinic.name,
      clinicStatus: clinic.status,
      totalOrders: state.draftsByClinic.get(clinicId) ?? 0,
      pendingApprovalOrders: pendingByClinic.get(clinicId) ?? 0,
    }));
  return { truncated: clinics.length > cap, clinics: clinics.slice(0, cap) };
}

// ── Sources ─────────────────────────────────────────────────────────────────────────────────────

function lowStockItems(state: AnalyticsFoldState, catalogItemId: string | undefined): ExceptionItem[] {
  const items: ExceptionItem[] = [];
  for (const level of state.stockLevels.values()) {
    if (level.lowSince === undefined) continue;
    if (catalogItemId !== undefined && level.catalogItemId !== catalogItemId) continue;
    const item = state.items.get(level.catalogItemId);
    items.push({
      metric: 'LOW_STOCK',
      priority: lowStockPriority(level.available),
      drillDownType: 'catalog_item',
      drillDownId: level.catalogItemId,
      detectedAt: level.lowSince,
      reference: {
        catalogItemId: level.catalogItemId,
        warehouseId: level.warehouseId,
        available: level.available,
        reorderPoint: item?.reorderPoint ?? 0,
        unitOfMeasure: item?.unitOfMeasure ?? '',
      },
    });
  }
  return items;
}

function expiringItems(state: AnalyticsFoldState, catalogItemId: string | undefined, asOf: string): ExceptionItem[] {
  const horizon = expiryHorizon(asOf);
  const items: ExceptionItem[] = [];
  for (const box of state.boxes.values()) {
    const expiresOn = box.expiresOn;
    if (expiresOn === undefined || box.onHand <= 0 || expiryIgnoredBoxStatuses.includes(box.status) || expiresOn > horizon) continue;
    if (catalogItemId !== undefined && box.catalogItemId !== catalogItemId) continue;
    items.push({
      metric: 'EXPIRING_STOCK',
      priority: expiringPriority(expiresOn, asOf),
      drillDownType: 'box',
      drillDownId: box.boxId,
      detectedAt: expiryDetectedAt(expiresOn),
      reference: {
        boxId: box.boxId,
        catalogItemId: box.catalogItemId,
        warehouseId: box.warehouseId,
        expiresOn,
        onHand: box.onHand,
        unitOfMeasure: state.items.get(box.catalogItemId)?.unitOfMeasure ?? '',
      },
    });
  }
  return items;
}

function deliveryExceptionItems(state: AnalyticsFoldState): ExceptionItem[] {
  return [...state.openDeliveryExceptions.values()].map((exception) => ({
    metric: 'DELIVERY_EXCEPTIONS',
    priority: exceptionPriorities.deliveryException,
    drillDownType: 'fulfillment',
    drillDownId: exception.orderId,
    detectedAt: exception.detectedAt,
    reference: {
      orderId: exception.orderId,
      orderNumber: orderNumber(state, exception.orderId),
      exceptionId: exception.exceptionId,
      reasonCode: exception.reasonCode,
    },
  }));
}

function discrepancyItems(state: AnalyticsFoldState): ExceptionItem[] {
  const items: ExceptionItem[] = [];
  for (const order of state.orders.values()) {
    const open = order.openDiscrepancies;
    if (open === undefined) continue;
    for (const entry of open.entries) {
      items.push({
        metric: 'RECEIPT_DISCREPANCIES',
        priority: exceptionPriorities.receiptDiscrepancy,
        drillDownType: 'fulfillment',
        drillDownId: order.orderId,
        detectedAt: open.detectedAt,
        reference: {
          orderId: order.orderId,
          orderNumber: order.number,
          lineId: entry.lineId,
          catalogItemId: entry.catalogItemId,
          expectedQty: entry.expectedQty,
          receivedQty: entry.receivedQty,
          reasonCode: entry.reasonCode,
        },
      });
    }
  }
  return items;
}

type PendingApproval = OrderFoldState & { readonly pendingSince: string };

/** Orders now in pending_approval, oldest first (pendingSince, then orderId in byte order). */
function pendingApprovals(state: AnalyticsFoldState): PendingApproval[] {
  const pending: PendingApproval[] = [];
  for (const order of state.orders.values()) {
    if (order.status === 'pending_approval' && order.pendingSince !== undefined) pending.push(order as PendingApproval);
  }
  return pending.sort((a, b) => Date.parse(a.pendingSince) - Date.parse(b.pendingSince) || compareBytes(a.orderId, b.orderId));
}

function approvalItems(state: AnalyticsFoldState, asOf: string): ExceptionItem[] {
  return pendingApprovals(state).map((order) => ({
    metric: 'APPROVAL_BACKLOG',
    priority: approvalPriority(order.pendingSince, asOf),
    drillDownType: 'order',
    drillDownId: order.orderId,
    detectedAt: order.pendingSince,
    reference: {
      orderId: order.orderId,
      orderNumber: order.number,
      clinicId: order.clinicId,
      band: approvalBandOf(Date.parse(asOf) - Date.parse(order.pendingSince)),
    },
  }));
}

// ── Consumption ─────────────────────────────────────────────────────────────────────────────────

/** Daily rows of the window in (item, unit, day) order, the first `cap` of them. */
function consumptionRows(state: AnalyticsFoldState, window: DayWindow, cap: number): { rows: ConsumptionDay[]; truncated: boolean } {
  const rows = [...state.consumption.values()]
    .filter((row) => dayInWindow(row.day, window))
    .sort(
      (a, b) =>
        compareBytes(a.catalogItemId, b.catalogItemId) || compareBytes(a.unitOfMeasure, b.unitOfMeasure) || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0),
    );
  return { rows: rows.slice(0, cap), truncated: rows.length > cap };
}

/** Consecutive rows of the same (item, unit), in the rows' order. */
function groupByItemAndUnit(rows: readonly ConsumptionDay[]): { catalogItemId: string; unitOfMeasure: string; rows: ConsumptionDay[] }[] {
  const groups: { catalogItemId: string; unitOfMeasure: string; rows: ConsumptionDay[] }[] = [];
  for (const row of rows) {
    const last = groups.at(-1);
    if (last !== undefined && last.catalogItemId === row.catalogItemId && last.unitOfMeasure === row.unitOfMeasure) last.rows.push(row);
    else groups.push({ catalogItemId: row.catalogItemId, unitOfMeasure: row.unitOfMeasure, rows: [row] });
  }
  return groups;
}

/** A UTC day (YYYY-MM-DD) lies in [from, to) when its midnight does. */
function dayInWindow(day: string, window: DayWindow): boolean {
  const start = Date.parse(`${day}T00:00:00.000Z`);
  return start >= Date.parse(window.from) && start < Date.parse(window.to);
}

function itemName(state: AnalyticsFoldState, catalogItemId: string): string {
  return state.items.get(catalogItemId)?.name ?? catalogItemId;
}

function orderNumber(state: AnalyticsFoldState, orderId: string): number {
  return state.orders.get(orderId)?.number ?? 0;
}
