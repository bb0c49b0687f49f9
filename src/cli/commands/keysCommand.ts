import { issueKey, KeyIssueError, listKeys, parseRequestedScopes, revokeKey } from '../../keys/keyIssuer.js';
import { openServices } from '../../main/services.js';
import { checkKeyRequester } from '../../console/keyRequester.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { optionalString, parseCommandOptions, requiredString } from '../options.js';
import { printJson } from '../output.js';

/** The 12-character prefix of a key as issued. */
const prefixPattern = /^svc_test_[0-9A-Za-z]{3}$/;

export const keysCommand: Command = async ({ args, config, logger, clock }) => {
  const [action, ...rest] = args;
  if (action !== 'issue' && action !== 'revoke' && action !== 'list') throw new UsageError(`unknown keys action "${String(action)}"`);
  const { values, usage } = parseCommandOptions(rest, ['keys', action], commandSpec('keys', action));
  // Arguments are checked before the database is opened: a bad one is a usage error (exit 2).
  const issue =
    action === 'issue'
      ? {
          workspaceId: requiredString(values.workspace, 'workspace', usage),
          memberId: requiredString(values.member, 'member', usage),
          scopes: scopesOption(requiredString(values.scopes, 'scopes', usage)),
          name: optionalString(values.name),
        }
      : undefined;
  const prefix = action === 'revoke' ? requiredString(values.prefix, 'prefix', usage) : undefined;
  if (prefix !== undefined && !prefixPattern.test(prefix)) {
    throw new UsageError(`--prefix must be the 12-character key prefix, such as svc_test_AbC (got "${prefix}")`);
  }
  const listed = action === 'list' ? requiredString(values.workspace, 'workspace', usage) : undefined;

  const services = await openServices(config, logger, clock);
  try {
    const { pool } = services.database;
    if (issue !== undefined) {
      const issued = await issueKey(
        { pool, clock, checkRequester: (workspaceId, memberId) => checkKeyRequester(services.eventStore, workspaceId, memberId) },
        { workspaceId: issue.workspaceId, memberId: issue.memberId, scopes: issue.scopes, ...(issue.name === undefined ? {} : { name: issue.name }) },
      );
      printJson(issued);
    } else if (prefix !== undefined) {
      const key = await revokeKey({ pool, clock }, prefix);
      printJson({ prefix: key.prefix, workspaceId: key.tenantId, status: key.status, revokedAt: key.revokedAt });
    } else if (listed !== undefined) {
      const keys = await listKeys(pool, listed);
      printJson({
        workspaceId: listed,
        keys: keys.map((key) => ({
          prefix: key.prefix,
          name: key.name,
          memberId: key.memberId,
          scopes: key.scopes,
          status: key.status,
          createdAt: key.createdAt,
          ...(key.revokedAt ? { revokedAt: key.revokedAt } : {}),
        })),
      });
    }
    return 0;
  } finally {
    await services.close();
  }
};

function scopesOption(value: string): string[] {
  try {
    return parseRequestedScopes(value.split(','));
  } catch (error) {
    if (error instanceof KeyIssueError) throw new UsageError(`--scopes: ${error.message}`);
    throw error;
  }
}
