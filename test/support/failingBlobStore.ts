import type { BlobStore } from '../../src/exports/blobStore.js';
import type { ExportAttempt, ExportProcessor, ExportTask } from '../../src/exports/exportQueue.js';

/** Wraps a bed's export store so that a test can make writes fail (build failures on demand). */
export type FailingPuts = {
  readonly wrap: (store: BlobStore) => BlobStore;
  /** How many of the next writes fail, whichever export's file they hold. */
  failNext(count: number): void;
  /** Writes still set to fail by failNext. */
  pending(): number;
  /** How many of the next writes of this export's file fail (other exports' builds are untouched). */
  failFor(exportId: string, count: number): void;
  /** Writes of this export's file still set to fail. */
  pendingFor(exportId: string): number;
};

export function failingPuts(): FailingPuts {
  let anyRemaining = 0;
  const remaining = new Map<string, number>();
  // The file key holds the export id as one path segment (exportFileOf).
  const exportIdOf = (key: string): string | undefined => [...remaining.keys()].find((exportId) => key.split('/').includes(exportId));
  return {
    wrap: (store) => ({
      ...store,
      kind: store.kind,
      put: async (file, bytes) => {
        const exportId = exportIdOf(file.key);
        const left = exportId === undefined ? 0 : (remaining.get(exportId) ?? 0);
        if (exportId !== undefined && left > 0) {
          remaining.set(exportId, left - 1);
          throw new Error('injected storage failure');
        }
        if (anyRemaining > 0) {
          anyRemaining -= 1;
          throw new Error('injected storage failure');
        }
        return store.put(file, bytes);
      },
      link: (file, now) => store.link(file, now),
      delete: (fileKey) => store.delete(fileKey),
      close: () => store.close(),
    }),
    failNext: (count) => {
      anyRemaining = count;
    },
    pending: () => anyRemaining,
    failFor: (exportId, count) => {
      remaining.set(exportId, count);
    },
    pendingFor: (exportId) => remaining.get(exportId) ?? 0,
  };
}

/** Wraps a bed's export builds so that a test can hold chosen runs until it lets them go. */
export type HeldBuilds = {
  readonly wrap: (processor: ExportProcessor) => ExportProcessor;
  /** Runs that `which` picks wait, before they start, until the returned function is called. */
  hold(which: (task: ExportTask, attempt: ExportAttempt) => boolean): () => void;
};

export function heldBuilds(): HeldBuilds {
  const gates = new Set<{ readonly which: (task: ExportTask, attempt: ExportAttempt) => boolean; readonly released: Promise<void> }>();
  return {
    wrap: (processor) => async (task, attempt) => {
      for (;;) {
        const gate = [...gates].find((candidate) => candidate.which(task, attempt));
        if (gate === undefined) break;
        await gate.released;
      }
      return processor(task, attempt);
    },
    hold: (which) => {
      let release = (): void => undefined;
      const gate = { which, released: new Promise<void>((resolve) => (release = resolve)) };
      gates.add(gate);
      return () => {
        gates.delete(gate);
        release();
      };
    },
  };
}
