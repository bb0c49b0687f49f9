import { describe, expect, test } from 'vitest';
import { standbyReason, wantsLease, type StandbyObservation } from './standbyReason.js';

/** A standby that serves reads: every condition met. */
const serving: StandbyObservation = {
  reachable: true,
  recovering: true,
  replicationName: 'pg2',
  primaryAnswers: true,
  syncState: 'sync',
  synchronous: true,
  lagMs: 40,
  maxLagMs: 5000,
  leased: true,
  servedBefore: true,
  replay: 2000n,
  fence: 1500n,
};

describe('why a standby serves no reads: a function of one observation', () => {
  test('all conditions met: it serves', () => {
    expect(standbyReason(serving)).toBeUndefined();
  });

  test.each<[string, Partial<StandbyObservation>, RegExp]>([
    ['unreachable', { reachable: false, failure: 'connect ECONNREFUSED' }, /^unreachable \(connect ECONNREFUSED\)$/],
    ['the primary itself (not in recovery)', { recovering: false }, /^not a standby/],
    ['no name to match in pg_stat_replication', { replicationName: null }, /no name for replication/],
    ['not streaming from the primary', { syncState: undefined }, /not streaming from the primary \(no "pg2"/],
    ['potential, not synchronous', { syncState: 'potential', synchronous: false }, /not a synchronous standby of the primary \(potential/],
    ['confirmed once only', { synchronous: false }, /not a synchronous standby/],
    ['behind the bound', { lagMs: 5001 }, /behind: replay lag 5001 ms over READ_REPLICA_MAX_LAG_MS 5000/],
    ['lag unknown', { lagMs: null }, /behind: replay lag \? ms/],
    ['no lease yet', { leased: false }, /no read lease/],
    ['lease recorded, its fence not yet replayed', { replay: 1499n }, /catching up with what committed before its lease/],
    ['lease recorded, no fence', { fence: undefined }, /catching up/],
  ])('%s', (_name, change, reason) => {
    expect(standbyReason({ ...serving, ...change })).toMatch(reason);
  });

  test('while the primary does not answer: a standby that served goes on for the rest of its lease, no other', () => {
    const outage = { ...serving, primaryAnswers: false, synchronous: false, syncState: undefined, lagMs: null };
    expect(standbyReason(outage)).toBeUndefined();
    expect(standbyReason({ ...outage, leased: false })).toMatch(/the primary does not answer/);
    expect(standbyReason({ ...outage, servedBefore: false })).toMatch(/the primary does not answer/);
    expect(standbyReason({ ...outage, reachable: false })).toMatch(/^unreachable/);
  });

  test('promoted while it served under a lease: it goes on serving until the watcher finds the new primary, then the primary serves', () => {
    const promoted = { ...serving, recovering: false, primaryAnswers: false, synchronous: false, syncState: undefined, lagMs: null };
    expect(standbyReason(promoted)).toBeUndefined();
    expect(standbyReason({ ...promoted, leased: false })).toMatch(/^not a standby/);
    expect(standbyReason({ ...promoted, servedBefore: false })).toMatch(/^not a standby/);
    expect(standbyReason({ ...promoted, primaryAnswers: true })).toMatch(/^not a standby/);
    expect(wantsLease({ ...promoted, primaryAnswers: true })).toBe(false);
  });

  test('a lease is wanted when all is well but the lease (and never while the primary is away)', () => {
    expect(wantsLease({ ...serving, leased: false, fence: undefined })).toBe(true);
    expect(wantsLease({ ...serving, lagMs: 9000 })).toBe(false);
    expect(wantsLease({ ...serving, synchronous: false })).toBe(false);
    expect(wantsLease({ ...serving, primaryAnswers: false })).toBe(false);
  });
});
