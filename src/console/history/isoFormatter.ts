const dayMs = 86_400_000;

/**
 * An ISO formatter for times that mostly move forward within a day: it formats the date once per
 * day and the clock time by arithmetic (Date#toISOString for every event is a measurable share of
 * generating a large history).
 */
export function createIsoFormatter(): (ms: number) => string {
  let dayStart = Number.NaN;
  let datePart = '';
  let lastMs = Number.NaN;
  let lastIso = '';
  const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
  return (ms) => {
    if (ms === lastMs) return lastIso;
    const day = Math.floor(ms / dayMs) * dayMs;
    if (day !== dayStart) {
      dayStart = day;
      datePart = new Date(day).toISOString().slice(0, 11);
    }
    let rest = ms - day;
    const millis = rest % 1000;
    rest = (rest - millis) / 1000;
    const seconds = rest % 60;
    rest = (rest - seconds) / 60;
    const minutes = rest % 60;
    const hours = (rest - minutes) / 60;
    lastMs = ms;
    lastIso = `${datePart}${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
    return lastIso;
  };
}
