import cliProgress from 'cli-progress';

/** A progress bar on stderr with rate and ETA; a no-op when `enabled` is false. */
export function createProgressBar(label: string, unit: string, enabled: boolean) {
  if (!enabled) {
    return { start: (_total: number) => {}, update: (_value: number, _total?: number) => {}, stop: () => {} };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | ETA {eta_formatted}`,
      stream: process.stderr,
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
      // Without a terminal (CI, pipes) it prints a plain line every few seconds instead.
      noTTYOutput: true,
      notTTYSchedule: 3000,
    },
    cliProgress.Presets.shades_classic,
  );
  const startedAt = Date.now();
  let started = false;
  return {
    start: (total: number) => {
      bar.start(total, 0, { rate: 0 });
      started = true;
    },
    update: (value: number, total?: number) => {
      if (!started) return;
      if (total !== undefined) bar.setTotal(total);
      const seconds = (Date.now() - startedAt) / 1000;
      bar.update(value, { rate: seconds > 0 ? Math.round(value / seconds) : 0 });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}
