import { compareLogPositions, logStart, type EventStore, type LogPosition } from '../eventStore/eventStore.js';
import { decodeEvent } from '../events/index.js';
import { createAnalyticsFoldState, foldEvent, type AnalyticsFoldState } from '../analytics/fold/analyticsFold.js';

export const defaultFoldPageSize = 1000;

export type FoldTenantLogOptions = {
  /** Events asked of readAll at a time. */
  readonly pageSize?: number;
  /** Called after each page with the number of log events (every tenant's) read up to upTo so far. */
  readonly onProgress?: (eventsRead: number) => void;
};

/**
 * Folds one tenant's events from the start of the log up to `upTo` (inclusive), in log order.
 * Events of unknown types are skipped; an event that breaks its schema throws (decodeEvent).
 */
export async function foldTenantLog(
  eventStore: EventStore,
  tenantId: string,
  upTo: LogPosition,
  options: FoldTenantLogOptions = {},
): Promise<AnalyticsFoldState> {
  const pageSize = options.pageSize ?? defaultFoldPageSize;
  const state = createAnalyticsFoldState(tenantId);
  let from = logStart;
  let eventsRead = 0;
  for (;;) {
    const page = await eventStore.readAll(from, pageSize);
    let pastUpTo = false;
    for (const recorded of page.events) {
      if (compareLogPositions(recorded.position, upTo) > 0) {
        pastUpTo = true;
        break;
      }
      eventsRead += 1;
      if (recorded.tenantId !== tenantId) continue;
      const event = decodeEvent(recorded);
      if (event !== undefined) foldEvent(state, event);
    }
    options.onProgress?.(eventsRead);
    if (pastUpTo || page.atHead || page.events.length === 0) return state;
    from = page.next;
  }
}
