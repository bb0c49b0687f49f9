import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { generateHistory } from './generateHistory.js';
import type { HistoryScale } from './historyParams.js';

/** The event counts README.md and `supply-api seed --help` state for the defaults (two workspaces, 90 days). */
const documented = {
  small: { text: '7 000 to 8 100', min: 7_000, max: 8_100 },
  medium: { text: '100 000 to 115 000', min: 100_000, max: 115_000 },
} as const;

function eventCount(scale: HistoryScale, seed: string, asOf: string): number {
  let events = 0;
  for (const write of generateHistory({ seed, tenants: 2, days: 90, scale, asOf })) events += write.events.length;
  return events;
}

describe('the seed sizes the documentation states', () => {
  test.each([
    ['small', '7', '2026-03-01T00:00:00.000Z'],
    ['small', '2', '2026-11-22T00:00:00.000Z'],
    ['medium', '11', '2026-03-01T00:00:00.000Z'],
  ] as const)('%s, --seed %s, --as-of %s: within the stated range', (scale, seed, asOf) => {
    const events = eventCount(scale, seed, asOf);
    expect(events).toBeGreaterThanOrEqual(documented[scale].min);
    expect(events).toBeLessThanOrEqual(documented[scale].max);
  });

  test('README.md and the command help state those ranges', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    const help = readFileSync(new URL('../../cli/commandTable.ts', import.meta.url), 'utf8');
    for (const { text } of Object.values(documented)) {
      expect(readme).toContain(text);
      expect(help).toContain(text);
    }
  });
});
