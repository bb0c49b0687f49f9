import { createConsoleActions } from '../../console/consoleActions.js';
import { checkSignInMember } from '../../console/signInMember.js';
import { issueSignInCode } from '../../mcp/signInCodes.js';
import { openServices } from '../../main/services.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { optionalString, parseCommandOptions, requiredString } from '../options.js';
import { printJson } from '../output.js';

const actionNames = ['suspend-member', 'reactivate-member', 'suspend-tenant', 'reactivate-tenant', 'advance-order', 'place-order', 'sign-in-code'] as const;
type Action = (typeof actionNames)[number];

function isAction(value: string | undefined): value is Action {
  return value !== undefined && (actionNames as readonly string[]).includes(value);
}

/** The console's single actions: each appends the console's event(s) and prints what changed. */
export const consoleCommand: Command = async ({ args, config, logger, clock }) => {
  const [action, ...rest] = args;
  if (!isAction(action)) throw new UsageError(`unknown console action "${String(action)}"`);
  // Each action accepts only its own options (the command table's), so a stray one is a usage error.
  const { values, usage } = parseCommandOptions(rest, ['console', action], commandSpec('console', action));
  const workspaceId = requiredString(values.workspace, 'workspace', usage);
  const argument = (name: 'member' | 'order') => requiredString(values[name], name, usage);
  const memberId = action === 'suspend-member' || action === 'reactivate-member' || action === 'sign-in-code' ? argument('member') : '';
  const orderId = action === 'advance-order' ? argument('order') : '';
  const clinicId = optionalString(values.clinic);

  const services = await openServices(config, logger, clock);
  try {
    const actions = createConsoleActions({ eventStore: services.eventStore, clock });
    let result: unknown;
    switch (action) {
      case 'suspend-member':
        result = await actions.suspendMember({ workspaceId, memberId });
        break;
      case 'reactivate-member':
        result = await actions.reactivateMember({ workspaceId, memberId });
        break;
      case 'suspend-tenant':
        result = await actions.suspendTenant({ workspaceId });
        break;
      case 'reactivate-tenant':
        result = await actions.reactivateTenant({ workspaceId });
        break;
      case 'advance-order':
        result = await actions.advanceOrder({ workspaceId, orderId });
        break;
      case 'place-order':
        result = await actions.placeOrder({ workspaceId, ...(clinicId === undefined ? {} : { clinicId }) });
        break;
      case 'sign-in-code':
        result = await issueSignInCode(
          { pool: services.database.pool, clock, checkMember: (w, m) => checkSignInMember(services.eventStore, w, m) },
          { workspaceId, memberId },
        );
        break;
    }
    printJson(result);
    return 0;
  } finally {
    await services.close();
  }
};
