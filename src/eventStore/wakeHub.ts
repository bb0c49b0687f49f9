/** A subscriber's side of a wake-up: it waits between polls and is woken early by news. */
export type Waker = {
  /**
   * Resolves after `ms`, or as soon as a wake-up arrives, or when the signal aborts. A wake-up
   * that arrived since the last wait counts: it is never lost while the subscriber was busy.
   */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  close(): void;
};

export type WakeHub = {
  waker(): Waker;
  wakeAll(): void;
  readonly size: number;
};

export function createWakeHub(): WakeHub {
  const wakes = new Set<() => void>();
  return {
    waker() {
      let woken = false;
      let finishWait: (() => void) | undefined;
      const wake = () => {
        woken = true;
        finishWait?.();
      };
      wakes.add(wake);
      return {
        wait(ms, signal) {
          if (woken || signal?.aborted) {
            woken = false;
            return Promise.resolve();
          }
          return new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', done);
              finishWait = undefined;
              woken = false;
              resolve();
            };
            const timer = setTimeout(done, ms);
            signal?.addEventListener('abort', done, { once: true });
            finishWait = done;
          });
        },
        close() {
          wakes.delete(wake);
          finishWait?.();
        },
      };
    },
    wakeAll() {
      for (const wake of wakes) wake();
    },
    get size() {
      return wakes.size;
    },
  };
}
