import { RebuildSlot, type Folding, type Projection } from '../../src/projecting/projection.js';
import { foldEvent } from './fold.js';
import { loadTouchedState, tablesEmpty } from './loadState.js';
import { AnalyticsState } from './state.js';
import { analyticsTables } from './tables.js';
import { writeState } from './writeState.js';

/**
 * The analytics aggregates of every tenant (see src/analytics/definitions.ts for what each figure
 * means). The projection keeps its own copy of every state a figure depends on, so that its
 * checkpoint alone describes the figures: it never reads another projection's tables.
 *
 * A batch loads the rows its events touch (a few queries, whatever the batch size), folds the
 * events in log order in memory, and writes each table back with one multi-row statement (a
 * rebuild folds several batches of the log before each write: Projection.fold). A
 * rebuild keeps the rows between batches (at most `rowsKept` a table, the least recently used go
 * first) and reads only those it does not hold; while it holds every row (it began on empty tables
 * and has dropped none) it reads nothing.
 */

const handledEvents = [
  'CatalogItemDefined',
  'CatalogItemRevised',
  'CatalogItemStatusChanged',
  'ClinicOpened',
  'ClinicRenamed',
  'ClinicStatusChanged',
  'WarehouseOpened',
  'WarehouseStatusChanged',
  'BoxRegistered',
  'BoxStatusChanged',
  'StockMovementRecorded',
  'OrderDrafted',
  'OrderSubmitted',
  'OrderApprovalRequested',
  'OrderApproved',
  'OrderRejected',
  'OrderCancelled',
  'OrderAllocated',
  'OrderPickingStarted',
  'FulfillmentDispatched',
  'DeliveryExceptionRaised',
  'DeliveryExceptionResolved',
  'FulfillmentDelivered',
  'FulfillmentReceived',
  'FulfillmentClosed',
] as const;

/** The analytics projection; `rowsKept` bounds a rebuild's memory (rows a table), small in tests. */
export function createAnalyticsProjection(options: { readonly rowsKept?: number } = {}): Projection {
  const rebuildState = new RebuildSlot(() => new AnalyticsState(options.rowsKept));
  // The state's `batch` is one write: every batch of the log folded before it counts as one.
  const folding: Folding = {
    begin: async (context) => {
      const kept = context.rebuild?.get(rebuildState);
      const state = kept ?? new AnalyticsState(options.rowsKept);
      // A rebuild's memory is new: it began with the generation (empty tables) or after a failed batch.
      if (kept !== undefined && state.batch === 1) state.complete = await tablesEmpty(context);
      return {
        fold: async (events) => {
          await loadTouchedState(events, state, context);
          for (const event of events) foldEvent(event, state);
        },
        write: async (writeContext) => {
          await writeState(state, writeContext);
          state.settle();
        },
      };
    },
  };
  return {
    name: 'analytics',
    version: 1,
    tables: analyticsTables,
    handles: handledEvents,
    fold: folding,
  };
}

/** The figures of src/analytics/definitions.ts, kept per tenant from the events alone. */
export const analyticsProjection: Projection = createAnalyticsProjection();
