import { describe, expect, test } from 'vitest';
import { currentVersionOf, isKnownEventType } from '../src/events/index.js';
import { allProjections } from './index.js';

describe('loads from the log', () => {
  // A type changed without its SQL twin would stop every rebuild's load from the log at its first
  // event of the new version (and the replay would run through Node): slower, silently.
  test('each reads every version of the types it handles, up to the current one', () => {
    const loads = allProjections.filter((projection) => projection.fold.rows?.fromLog !== undefined);
    expect(loads.length).toBeGreaterThan(0);
    for (const projection of loads) {
      for (const type of projection.handles) {
        if (!isKnownEventType(type)) throw new Error(`${projection.name} handles an unknown type ${type}`);
        expect(projection.fold.rows?.fromLog?.version, `${projection.name}: ${type}`).toBe(currentVersionOf(type));
      }
    }
  });
});
