/**
 * The discrete-event clock of the history: tasks run in time order (ties in scheduling order), so
 * every task sees the world as it is at its own time and the events come out chronologically.
 * Tasks due at or after the end of the history never run: that is what leaves orders, approvals
 * and exceptions open at `asOf`.
 */
export type Task = () => void;

export type Scheduler = {
  at(timeMs: number, task: Task): void;
  /** Runs the next due task; false when none is left. */
  runNext(): boolean;
  /** The time of the task running now (or last run). */
  now(): number;
  readonly endMs: number;
};

type Entry = { readonly timeMs: number; readonly seq: number; readonly task: Task };

export function createScheduler(startMs: number, endMs: number): Scheduler {
  const heap: Entry[] = [];
  let seq = 0;
  let current = startMs;

  const before = (x: Entry, y: Entry): boolean => x.timeMs < y.timeMs || (x.timeMs === y.timeMs && x.seq < y.seq);

  const push = (entry: Entry): void => {
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const up = heap[parent];
      if (up === undefined || !before(entry, up)) break;
      heap[i] = up;
      i = parent;
    }
    heap[i] = entry;
  };

  const pop = (): Entry | undefined => {
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const leftEntry = heap[left];
      const rightEntry = heap[right];
      if (leftEntry === undefined) break;
      const child = rightEntry !== undefined && before(rightEntry, leftEntry) ? right : left;
      const childEntry = heap[child];
      if (childEntry === undefined || !before(childEntry, last)) break;
      heap[i] = childEntry;
      i = child;
    }
    heap[i] = last;
    return top;
  };

  return {
    endMs,
    at: (timeMs, task) => {
      // A task may not run before the one scheduling it: time only moves forward.
      const due = Math.max(Math.round(timeMs), current);
      if (due >= endMs) return;
      seq += 1;
      push({ timeMs: due, seq, task });
    },
    runNext: () => {
      const entry = pop();
      if (entry === undefined) return false;
      current = entry.timeMs;
      entry.task();
      return true;
    },
    now: () => current,
  };
}
