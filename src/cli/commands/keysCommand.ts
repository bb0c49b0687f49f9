import { issueKey, listKeys, revokeKey } from '../../keys/keyIssuer.js';
import { openServices } from '../../main/services.js';
import { checkKeyRequester } from '../../console/keyRequester.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { parseOptions, requiredString } from '../options.js';
import { printJson } from '../output.js';

const usage = {
  issue: 'supply-api keys issue --workspace W --member M --scopes a,b [--name N]',
  revoke: 'supply-api keys revoke --prefix P',
  list: 'supply-api keys list --workspace W',
};

export const keysCommand: Command = async ({ args, config, logger, clock }) => {
  const [action, ...rest] = args;
  if (action !== 'issue' && action !== 'revoke' && action !== 'list') {
    throw new UsageError(`keys needs one of issue, revoke, list; usage:\n  ${Object.values(usage).join('\n  ')}`);
  }
  const options = parseOptions(
    rest,
    { workspace: { type: 'string' }, member: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, prefix: { type: 'string' } },
    usage[action],
  );
  const { values } = options;
  const services = await openServices(config, logger, clock);
  try {
    const { pool } = services.database;
    if (action === 'issue') {
      const issued = await issueKey(
        { pool, clock, checkRequester: (workspaceId, memberId) => checkKeyRequester(services.eventStore, workspaceId, memberId) },
        {
          workspaceId: requiredString(values.workspace, 'workspace', usage.issue),
          memberId: requiredString(values.member, 'member', usage.issue),
          scopes: requiredString(values.scopes, 'scopes', usage.issue).split(','),
          ...(typeof values.name === 'string' ? { name: values.name } : {}),
        },
      );
      printJson(issued);
    } else if (action === 'revoke') {
      const key = await revokeKey({ pool, clock }, requiredString(values.prefix, 'prefix', usage.revoke));
      printJson({ prefix: key.prefix, workspaceId: key.tenantId, status: key.status, revokedAt: key.revokedAt });
    } else {
      const workspaceId = requiredString(values.workspace, 'workspace', usage.list);
      const keys = await listKeys(pool, workspaceId);
      printJson({
        workspaceId,
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
