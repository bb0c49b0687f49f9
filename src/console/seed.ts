import { WrongExpectedRevisionError, type EventStore, type StreamWrite } from '../eventStore/eventStore.js';
import { ConsoleError } from './consoleError.js';
import { generateHistory } from './history/generateHistory.js';
import { estimateEventCount, resolveHistoryParams, type HistoryParams } from './history/historyParams.js';
import { createSummaryCollector, type SeedSummary } from './seedSummary.js';

export type SeedProgress = { readonly written: number; readonly total: number };

export type SeedOptions = {
  readonly eventStore: EventStore;
  readonly params: HistoryParams;
  /** Called after every transaction; `total` is an estimate until the end. */
  readonly progress?: (progress: SeedProgress) => void;
  /** Events per transaction (about: a write is never split). */
  readonly batchSize?: number;
};

/** Most ids the summary lists per kind for medium and large histories. */
export const summarySampleSize = 200;

/**
 * Appends a generated history through the event store, about `batchSize` events per transaction,
 * and returns the summary the command line prints. Refuses a store that already holds the first
 * workspace of this seed.
 */
export async function seed(options: SeedOptions): Promise<SeedSummary> {
  const { eventStore, params, progress } = options;
  const batchSize = options.batchSize ?? 500;
  const resolved = resolveHistoryParams(params);
  const estimate = estimateEventCount(params);
  const collector = createSummaryCollector(resolved.scale === 'small' ? undefined : summarySampleSize);
  let written = 0;
  let firstWorkspace: { readonly streamName: string; readonly workspaceId: string } | undefined;
  let inFlight: Promise<void> | undefined;

  const refusal = (workspaceId: string): ConsoleError =>
    new ConsoleError(`workspace ${workspaceId} is already seeded; use another --seed or an empty store`);

  const send = async (group: StreamWrite[], count: number): Promise<void> => {
    // One transaction in flight while the next group is generated; the order of the log is kept.
    await inFlight;
    inFlight = eventStore.appendMany(group).then(
      () => {
        written += count;
        progress?.({ written, total: Math.max(estimate, written) });
      },
      (error: unknown) => {
        // Someone seeded the same workspace between our check and this write.
        if (error instanceof WrongExpectedRevisionError && error.streamName === firstWorkspace?.streamName) {
          throw refusal(firstWorkspace.workspaceId);
        }
        throw error;
      },
    );
  };

  /**
   * Consecutive writes make a transaction of about `batchSize` events. A stream may come back within
   * one transaction: its writes chain their expected revisions, and the stores keep each stream's
   * order (the Postgres adapter appends such a transaction in rounds of distinct streams). Adjacent
   * writes of one stream are merged.
   */
  const writeAll = async (): Promise<void> => {
    let group: StreamWrite[] = [];
    let groupEvents = 0;
    for (const write of generateHistory(params)) {
      if (firstWorkspace === undefined) {
        firstWorkspace = { streamName: write.streamName, workspaceId: write.events[0]?.tenantId ?? write.streamName };
        if ((await eventStore.readStream(write.streamName)).length > 0) throw refusal(firstWorkspace.workspaceId);
      }
      collector.observe(write);
      const last = group[group.length - 1];
      if (last !== undefined && last.streamName === write.streamName) group[group.length - 1] = { ...last, events: [...last.events, ...write.events] };
      else group.push(write);
      groupEvents += write.events.length;
      if (groupEvents >= batchSize) {
        await send(group, groupEvents);
        group = [];
        groupEvents = 0;
      }
    }
    if (group.length > 0) await send(group, groupEvents);
    await inFlight;
  };

  try {
    await writeAll();
  } catch (error) {
    // Settle the transaction still running before reporting, so that it cannot fail unobserved.
    await inFlight?.catch(() => undefined);
    throw error;
  }
  progress?.({ written, total: written });
  return collector.summary();
}
