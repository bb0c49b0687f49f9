import cron from 'node-cron';
import type { DatabasePool } from 'slonik';
import { isoUtc, type Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import { purgeExpired } from './oauthStore.js';

/** Expired codes and tokens are kept a day (for investigations of replays), then deleted. */
export const oauthRetentionMs = 24 * 60 * 60 * 1000;

/** Deletes expired OAuth rows every hour (UTC); a failed pass is logged and the next one tries again. */
export function scheduleOAuthPurge(deps: { pool: DatabasePool; clock: Clock; logger: Logger }): { stop(): Promise<void> } {
  const task = cron.schedule(
    '17 * * * *',
    async () => {
      try {
        const report = await purgeExpired(deps.pool, isoUtc(deps.clock.now().getTime() - oauthRetentionMs));
        if (report.signInCodes + report.authorizationCodes + report.tokens + report.grants > 0) deps.logger.info(report, 'expired oauth rows deleted');
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
