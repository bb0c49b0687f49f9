/**
 * Polls `condition` every `intervalMs` until it holds, or fails naming `what` once `timeoutMs` has
 * passed: for the clusters' own start-up and failover steps, which happen in child processes.
 */
export async function waitFor(what: string, timeoutMs: number, condition: () => Promise<boolean>, intervalMs = 200): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
