import type { BlobStore } from '../../src/exports/blobStore.js';

/** Wraps a bed's export store so that a test can make the next N file writes fail (build failures on demand). */
export type FailingPuts = {
  readonly wrap: (store: BlobStore) => BlobStore;
  /** How many of the next writes fail. */
  failNext(count: number): void;
  /** Writes still set to fail. */
  pending(): number;
};

export function failingPuts(): FailingPuts {
  let remaining = 0;
  return {
    wrap: (store) => ({
      ...store,
      kind: store.kind,
      put: async (file, bytes) => {
        if (remaining > 0) {
          remaining -= 1;
          throw new Error('injected storage failure');
        }
        return store.put(file, bytes);
      },
      link: (file, now) => store.link(file, now),
      delete: (fileKey) => store.delete(fileKey),
      close: () => store.close(),
    }),
    failNext: (count) => {
      remaining = count;
    },
    pending: () => remaining,
  };
}
