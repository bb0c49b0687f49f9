import type { Projection } from '../src/projecting/projection.js';
import { analyticsProjection } from './analytics/projection.js';
import { boxesProjection } from './boxes/projection.js';
import { catalogProjection } from './catalog/projection.js';
import { fulfillmentsProjection } from './fulfillments/projection.js';
import { locationsProjection } from './locations/projection.js';
import { ordersProjection } from './orders/projection.js';
import { stockMovementsProjection } from './stockMovements/projection.js';
import { tenantsProjection } from './tenants/projection.js';

/** Every read model the projector keeps, in the order their tables are listed. */
export const allProjections: readonly Projection[] = [
  tenantsProjection,
  locationsProjection,
  catalogProjection,
  boxesProjection,
  stockMovementsProjection,
  ordersProjection,
  fulfillmentsProjection,
  analyticsProjection,
];

export function projectionsNamed(names: readonly string[] | undefined): readonly Projection[] {
  if (names === undefined || names.length === 0) return allProjections;
  return names.map((name) => {
    const projection = allProjections.find((p) => p.name === name);
    if (!projection) throw new Error(`unknown projection ${name}; known: ${allProjections.map((p) => p.name).join(', ')}`);
    return projection;
  });
}
