import { compareLogPositions, logStart, type LogPosition } from '../eventStore/eventStore.js';

/** Where a reader serving all these checkpoints starts: the lowest of them. */
export function minimumCheckpoint(checkpoints: readonly LogPosition[]): LogPosition {
  let lowest: LogPosition | undefined;
  for (const checkpoint of checkpoints) {
    if (lowest === undefined || compareLogPositions(checkpoint, lowest) < 0) lowest = checkpoint;
  }
  return lowest ?? logStart;
}

export function formatPosition(position: LogPosition): string {
  return `${position.tx}/${position.seq}`;
}
