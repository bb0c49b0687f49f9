import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A pause that paces a load loop, or stands for the time a simulated piece of work takes: nothing
 * waits on it for a condition and no assertion relies on it. Tests pause through this alone, so
 * that a fixed sleep before an assertion stays findable (`grep -rn "setTimeout\|sleep(" --include=*.test.ts`).
 */
export function pace(ms: number): Promise<void> {
  return sleep(ms).then(() => undefined);
}
