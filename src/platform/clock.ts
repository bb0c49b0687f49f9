export type Clock = {
  now(): Date;
};

export const systemClock: Clock = { now: () => new Date() };

export function fixedClock(at: Date | string): Clock & { set(at: Date | string): void; advance(ms: number): void } {
  let current = new Date(at);
  return {
    now: () => new Date(current),
    set: (next) => {
      current = new Date(next);
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms);
    },
  };
}

/** ISO 8601 in UTC with milliseconds and `Z`, the one timestamp format of the service. */
export function isoUtc(value: Date | string | number): string {
  return new Date(value).toISOString();
}
