import { z } from 'zod';
import { orderStatus } from '../../src/events/index.js';
import { storedInteger } from '../shared/storedInteger.js';

/**
 * Row shapes of the analytics tables, as the projection loads them at the start of a batch and
 * as the reader reads them. int8 columns travel as `column::float8` (storedInteger); timestamps
 * leave the database as ISO strings with milliseconds (the pool's type parser); dates go through
 * to_char.
 */

export const itemRow = z.object({
  tenantId: z.string(),
  itemId: z.string(),
  name: z.string(),
  unitOfMeasure: z.string(),
  reorderPoint: storedInteger,
  status: z.string(),
});
export type ItemRow = z.infer<typeof itemRow>;

export const warehouseRow = z.object({ tenantId: z.string(), warehouseId: z.string(), status: z.string() });
export type WarehouseRow = z.infer<typeof warehouseRow>;

export const clinicRow = z.object({
  tenantId: z.string(),
  clinicId: z.string(),
  /** Null while the clinic is known only from its orders (no ClinicOpened yet). */
  name: z.string().nullable(),
  status: z.string().nullable(),
  totalOrders: storedInteger,
  pendingApprovalOrders: storedInteger,
  pendingOrders: storedInteger,
});
export type ClinicRow = z.infer<typeof clinicRow>;

export const boxRow = z.object({
  tenantId: z.string(),
  boxId: z.string(),
  catalogItemId: z.string(),
  warehouseId: z.string(),
  status: z.string(),
  onHand: storedInteger,
  reserved: storedInteger,
  expiresOn: z.string().nullable(),
});
export type BoxRow = z.infer<typeof boxRow>;

export const stockLevelRow = z.object({
  tenantId: z.string(),
  catalogItemId: z.string(),
  warehouseId: z.string(),
  available: storedInteger,
  /** Null unless the level is low. */
  detectedAt: z.string().nullable(),
  priority: z.number().int().nullable(),
});
export type StockLevelRow = z.infer<typeof stockLevelRow>;

export const orderRow = z.object({
  tenantId: z.string(),
  orderId: z.string(),
  number: z.number().int(),
  clinicId: z.string(),
  status: orderStatus,
  pendingSince: z.string().nullable(),
  submittedAt: z.string().nullable(),
  approvedAt: z.string().nullable(),
  dispatchedAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  receivedAt: z.string().nullable(),
});
export type OrderRow = z.infer<typeof orderRow>;

export const deliveryExceptionRow = z.object({
  tenantId: z.string(),
  orderId: z.string(),
  exceptionId: z.string(),
  orderNumber: z.number().int(),
  reasonCode: z.string(),
  detectedAt: z.string(),
});
export type DeliveryExceptionRow = z.infer<typeof deliveryExceptionRow>;

// ── reader rows ─────────────────────────────────────────────────────────────────────────────────

export const countRow = z.object({ count: z.number().int() });
export const sumRow = z.object({ total: storedInteger });

export const lowStockRow = z.object({
  catalogItemId: z.string(),
  warehouseId: z.string(),
  available: storedInteger,
  detectedAt: z.string(),
  reorderPoint: storedInteger,
  unitOfMeasure: z.string(),
});

export const expiringRow = z.object({
  boxId: z.string(),
  catalogItemId: z.string(),
  warehouseId: z.string(),
  expiresOn: z.string(),
  onHand: storedInteger,
  unitOfMeasure: z.string(),
});

export const openDeliveryExceptionRow = z.object({
  orderId: z.string(),
  orderNumber: z.number().int(),
  exceptionId: z.string(),
  reasonCode: z.string(),
  detectedAt: z.string(),
});

export const discrepancyRow = z.object({
  orderId: z.string(),
  orderNumber: z.number().int(),
  lineId: z.string(),
  catalogItemId: z.string(),
  expectedQty: storedInteger,
  receivedQty: storedInteger,
  reasonCode: z.string(),
  detectedAt: z.string(),
});

export const pendingApprovalRow = z.object({
  orderId: z.string(),
  orderNumber: z.number().int(),
  clinicId: z.string(),
  pendingSince: z.string(),
});

export const cycleStageSumRow = z.object({ stage: z.string(), samples: storedInteger, totalMs: storedInteger });

export const consumptionDayRow = z.object({
  catalogItemId: z.string(),
  unit: z.string(),
  day: z.string(),
  quantity: storedInteger,
  movements: storedInteger,
  name: z.string(),
});
export type ConsumptionDayRow = z.infer<typeof consumptionDayRow>;

export const comparisonRow = z.object({
  clinicId: z.string(),
  clinicName: z.string(),
  clinicStatus: z.string(),
  totalOrders: storedInteger,
  pendingApprovalOrders: storedInteger,
});
