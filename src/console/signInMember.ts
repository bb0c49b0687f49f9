import type { EventStore } from '../eventStore/eventStore.js';
import { streams } from '../events/index.js';
import { ConsoleError } from './consoleError.js';
import { readSnapshot } from './consoleReads.js';
import { memberView, workspaceView } from './tenantFolds.js';

/** The console hands sign-in codes only to active members of active workspaces. */
export async function checkSignInMember(eventStore: EventStore, workspaceId: string, memberId: string): Promise<void> {
  const workspace = workspaceView((await readSnapshot(eventStore, streams.workspace(workspaceId))).events);
  if (!workspace) throw new ConsoleError(`workspace ${workspaceId} does not exist`);
  if (workspace.status !== 'active') throw new ConsoleError(`workspace ${workspaceId} is suspended`);
  const member = memberView((await readSnapshot(eventStore, streams.member(workspaceId, memberId))).events);
  if (!member) throw new ConsoleError(`member ${memberId} is not a member of workspace ${workspaceId}`);
  if (member.status !== 'active') throw new ConsoleError(`member ${memberId} is ${member.status}; only an active member can sign in`);
}
