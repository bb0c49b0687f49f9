import cliProgress from 'cli-progress';

export type ProgressBar = { start(total: number): void; update(value: number, total?: number): void; stop(): void };

/**
 * A progress bar on stderr with rate and time left; a no-op when `enabled` is false. It appears
 * once there is something to count (a total above 0), so it never shows "0/0"; rate and time left
 * read "…" until a rate can be measured.
 */
export function createProgressBar(label: string, unit: string, enabled: boolean, stream: NodeJS.WritableStream = process.stderr, now: () => number = Date.now): ProgressBar {
  if (!enabled) {
    return { start: () => {}, update: () => {}, stop: () => {} };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate} | {left}`,
      stream,
      hideCursor: true,
      fps: 5,
      // Without a terminal (CI, pipes) it prints a plain line every few seconds instead.
      noTTYOutput: true,
      notTTYSchedule: 3000,
    },
    cliProgress.Presets.shades_classic,
  );
  const startedAt = now();
  let total = 0;
  let started = false;
  // The value the bar first showed: what was done before (a resumed replay) is not this run's rate.
  let from = 0;
  const tokens = (value: number) => progressTokens(value, total, (now() - startedAt) / 1000, unit, from);
  return {
    start: (newTotal: number) => {
      total = newTotal;
      if (total > 0 && !started) {
        bar.start(total, 0, tokens(0));
        started = true;
      }
    },
    update: (value: number, newTotal?: number) => {
      if (newTotal !== undefined) total = newTotal;
      if (!started) {
        if (total <= 0) return;
        from = value;
        bar.start(total, value, tokens(value));
        started = true;
        return;
      }
      if (newTotal !== undefined) bar.setTotal(total);
      bar.update(value, tokens(value));
    },
    stop: () => {
      if (started) bar.stop();
      started = false;
    },
  };
}

/**
 * The rate and time-left texts of a bar: "…" until a second has passed with something done since
 * `from` (where the bar started: a resumed replay's first value).
 */
export function progressTokens(value: number, total: number, seconds: number, unit: string, from = 0): { rate: string; left: string } {
  if (seconds < 1 || value <= from) return { rate: `… ${unit}/s`, left: 'time left …' };
  const rate = (value - from) / seconds;
  const remaining = Math.max(0, total - value) / rate;
  return { rate: `${Math.round(rate)} ${unit}/s`, left: `time left ${formatSeconds(remaining)}` };
}

/** 7 → "7s", 125 → "2m 05s", 7260 → "2h 01m". */
export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '…';
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes}m ${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}
