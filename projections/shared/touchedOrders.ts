import type { ProjectedEvent } from '../../src/projecting/projection.js';
import { rowKey } from '../../src/projecting/rowChanges.js';

/**
 * (tenant, order) of every order the events name that `tracked` (keyed by rowKey) does not hold
 * yet, each once: the rows a fold still has to read.
 */
export function untrackedOrders(events: readonly ProjectedEvent[], tracked: ReadonlyMap<string, unknown>): (readonly [string, string])[] {
  const keys = new Map<string, readonly [string, string]>();
  for (const { tenantId, data } of events) {
    if (!('orderId' in data)) continue;
    const key = rowKey(tenantId, data.orderId);
    if (!tracked.has(key)) keys.set(key, [tenantId, data.orderId]);
  }
  return [...keys.values()];
}
