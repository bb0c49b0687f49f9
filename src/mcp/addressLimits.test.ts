import { describe, expect, test } from 'vitest';
import { createLimits } from '../api/rateLimit/requestBudget.js';
import { createLogger } from '../platform/logger.js';
import { failedAttemptGuard } from './addressLimits.js';

describe('failed bearer tokens per client address', () => {
  test('once an address is over its limit it is refused without any lookup until the window ends; others are not', async () => {
    const limits = await createLimits({ logger: createLogger('silent') });
    let now = 1_000_000;
    const guard = failedAttemptGuard(limits.limit({ points: 3, windowSeconds: 60, keyPrefix: 'test' }), () => now);
    for (let i = 0; i < 3; i += 1) {
      expect(guard.blockedFor('10.0.0.1')).toBeUndefined();
      await guard.fail('10.0.0.1');
    }
    expect(guard.blockedFor('10.0.0.1')).toBeUndefined();
    await guard.fail('10.0.0.1');
    const seconds = guard.blockedFor('10.0.0.1');
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(guard.blockedFor('10.0.0.2')).toBeUndefined();
    now += 61_000;
    expect(guard.blockedFor('10.0.0.1')).toBeUndefined();
    await limits.close();
  });
});
