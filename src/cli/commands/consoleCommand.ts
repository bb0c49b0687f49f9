import { createConsoleActions } from '../../console/consoleActions.js';
import { checkSignInMember } from '../../console/signInMember.js';
import { issueSignInCode } from '../../mcp/signInCodes.js';
import { openServices } from '../../main/services.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { parseOptions, requiredString } from '../options.js';
import { printJson } from '../output.js';

const usages = {
  'suspend-member': 'supply-api console suspend-member --workspace W --member M',
  'reactivate-member': 'supply-api console reactivate-member --workspace W --member M',
  'suspend-tenant': 'supply-api console suspend-tenant --workspace W',
  'reactivate-tenant': 'supply-api console reactivate-tenant --workspace W',
  'advance-order': 'supply-api console advance-order --workspace W --order O',
  'place-order': 'supply-api console place-order --workspace W [--clinic C]',
  'sign-in-code': 'supply-api console sign-in-code --workspace W --member M',
} as const;
type Action = keyof typeof usages;

function isAction(value: string | undefined): value is Action {
  return value !== undefined && Object.hasOwn(usages, value);
}

/** The console's single actions: each appends the console's event(s) and prints what changed. */
export const consoleCommand: Command = async ({ args, config, logger, clock }) => {
  const [action, ...rest] = args;
  if (!isAction(action)) {
    throw new UsageError(`console needs one of ${Object.keys(usages).join(', ')}; usage:\n  ${Object.values(usages).join('\n  ')}`);
  }
  const usage = usages[action];
  const { values } = parseOptions(rest, { workspace: { type: 'string' }, member: { type: 'string' }, order: { type: 'string' }, clinic: { type: 'string' } }, usage);
  const workspaceId = requiredString(values.workspace, 'workspace', usage);
  const argument = (name: 'member' | 'order') => requiredString(values[name], name, usage);
  const only = (allowed: readonly string[]) => {
    const extra = (['member', 'order', 'clinic'] as const).find((name) => values[name] !== undefined && !allowed.includes(name));
    if (extra) throw new UsageError(`--${extra} does not apply here; usage: ${usage}`);
  };

  const services = await openServices(config, logger, clock);
  try {
    const actions = createConsoleActions({ eventStore: services.eventStore, clock });
    let result: unknown;
    switch (action) {
      case 'suspend-member':
        only(['member']);
        result = await actions.suspendMember({ workspaceId, memberId: argument('member') });
        break;
      case 'reactivate-member':
        only(['member']);
        result = await actions.reactivateMember({ workspaceId, memberId: argument('member') });
        break;
      case 'suspend-tenant':
        only([]);
        result = await actions.suspendTenant({ workspaceId });
        break;
      case 'reactivate-tenant':
        only([]);
        result = await actions.reactivateTenant({ workspaceId });
        break;
      case 'advance-order':
        only(['order']);
        result = await actions.advanceOrder({ workspaceId, orderId: argument('order') });
        break;
      case 'place-order':
        only(['clinic']);
        result = await actions.placeOrder({ workspaceId, ...(typeof values.clinic === 'string' ? { clinicId: values.clinic } : {}) });
        break;
      case 'sign-in-code':
        only(['member']);
        result = await issueSignInCode(
          { pool: services.database.pool, clock, checkMember: (w, m) => checkSignInMember(services.eventStore, w, m) },
          { workspaceId, memberId: argument('member') },
        );
        break;
    }
    printJson(result);
    return 0;
  } finally {
    await services.close();
  }
};
