import cron from 'node-cron';
import type { DatabasePool } from 'slonik';
import { isoUtc, type Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import { purgeExpired } from './oauthStore.js';

/** Expired codes and tokens are kept a day (for investigations of replays), then deleted. */
export const oauthRetentionMs = 24 * 60 * 60 * 1000;

/**
 * A registered client is deleted once no grant refers to it and it was never used for a day after
 * registering, or not used (no sign-in, no refresh) for 90 days; its app registers again.
 */
export const neverUsedClientMs = 24 * 60 * 60 * 1000;
export const unusedClientMs = 90 * 24 * 60 * 60 * 1000;

/** The cutoffs of one purge pass at `now`. */
export function purgeCutoffs(now: Date): { cutoff: string; clients: { neverUsedBefore: string; unusedSince: string } } {
  const at = now.getTime();
  return { cutoff: isoUtc(at - oauthRetentionMs), clients: { neverUsedBefore: isoUtc(at - neverUsedClientMs), unusedSince: isoUtc(at - unusedClientMs) } };
}

/** Deletes expired OAuth rows and unused clients every hour (UTC); a failed pass is logged and the next one tries again. */
export function scheduleOAuthPurge(deps: { pool: DatabasePool; clock: Clock; logger: Logger }): { stop(): Promise<void> } {
  const task = cron.schedule(
    '17 * * * *',
    async () => {
      try {
        const { cutoff, clients } = purgeCutoffs(deps.clock.now());
        const report = await purgeExpired(deps.pool, cutoff, clients);
        if (report.signInCodes + report.authorizationCodes + report.tokens + report.grants + report.clients > 0) deps.logger.info(report, 'expired oauth rows deleted');
      } catch (error) {
        deps.logger.error({ err: error }, 'oauth purge failed');
      }
    },
    { name: 'oauth-purge', timezone: 'UTC', noOverlap: true },
  );
  return {
    stop: async () => {
      await task.destroy();
    },
  };
}
