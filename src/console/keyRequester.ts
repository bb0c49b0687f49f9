import type { EventStore } from '../eventStore/eventStore.js';
import { streams } from '../events/index.js';
import { ConsoleError } from './consoleError.js';
import { readSnapshot } from './consoleReads.js';
import { memberView, workspaceView } from './tenantFolds.js';

/** The permission a member needs to request an API key. */
export const keyRequestPermission = 'integrations.manage';

/**
 * A key is issued only on the request of an active member of an active workspace who holds
 * `integrations.manage`; the console's own streams say whether that is so, and the console
 * refuses the request (a ConsoleError) when it is not.
 */
export async function checkKeyRequester(eventStore: EventStore, workspaceId: string, memberId: string): Promise<void> {
  const workspace = workspaceView((await readSnapshot(eventStore, streams.workspace(workspaceId))).events);
  if (!workspace) {
    throw new ConsoleError(`workspace ${workspaceId} does not exist`);
  }
  if (workspace.status !== 'active') {
    throw new ConsoleError(`workspace ${workspaceId} is suspended`);
  }
  const member = memberView((await readSnapshot(eventStore, streams.member(workspaceId, memberId))).events);
  if (!member) {
    throw new ConsoleError(`member ${memberId} is not a member of workspace ${workspaceId}`);
  }
  if (member.status !== 'active') {
    throw new ConsoleError(`member ${memberId} is ${member.status}; a key needs an active member`);
  }
  if (!member.permissions.includes(keyRequestPermission)) {
    throw new ConsoleError(`member ${memberId} does not hold ${keyRequestPermission}`);
  }
}
