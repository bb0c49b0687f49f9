import { WrongExpectedRevisionError, type EventStore } from '../eventStore/eventStore.js';
import { streams } from '../events/index.js';
import type { Clock } from '../platform/clock.js';
import type { ConsoleDeps } from './advanceStep.js';
import { ConsoleError } from './consoleError.js';
import { randomIds, type IdSource } from './consoleIds.js';
import { readSnapshot } from './consoleReads.js';
import { advanceOrder, type AdvancedOrder } from './orderAdvance.js';
import { placeOrder, type PlacedOrder } from './orderPlacement.js';
import { createTenantDirectory } from './tenantDirectory.js';
import { memberView } from './tenantFolds.js';
import { createWriteBatch } from './writeBatch.js';

export type MemberChange = { readonly workspaceId: string; readonly memberId: string; readonly status: 'active' | 'suspended' };
export type TenantChange = { readonly workspaceId: string; readonly status: 'active' | 'suspended' };

/** The console's single actions (supply-api console …): each reads what it needs and appends at the exact revision. */
export type ConsoleActions = {
  suspendMember(input: { workspaceId: string; memberId: string }): Promise<MemberChange>;
  reactivateMember(input: { workspaceId: string; memberId: string }): Promise<MemberChange>;
  suspendTenant(input: { workspaceId: string }): Promise<TenantChange>;
  reactivateTenant(input: { workspaceId: string }): Promise<TenantChange>;
  advanceOrder(input: { workspaceId: string; orderId: string }): Promise<AdvancedOrder>;
  placeOrder(input: { workspaceId: string; clinicId?: string }): Promise<PlacedOrder>;
};

export function createConsoleActions(options: { eventStore: EventStore; clock: Clock; ids?: IdSource }): ConsoleActions {
  const deps: ConsoleDeps = { eventStore: options.eventStore, clock: options.clock, ids: options.ids ?? randomIds };
  return {
    suspendMember: (input) => guarded(() => changeMember(deps, input, 'suspended')),
    reactivateMember: (input) => guarded(() => changeMember(deps, input, 'active')),
    suspendTenant: (input) => guarded(() => changeTenant(deps, input.workspaceId, 'suspended')),
    reactivateTenant: (input) => guarded(() => changeTenant(deps, input.workspaceId, 'active')),
    advanceOrder: (input) => guarded(() => advanceOrder(deps, input)),
    placeOrder: (input) => guarded(() => placeOrder(deps, input)),
  };
}

/** Another writer got there between our read and our append: nothing was written. */
async function guarded<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof WrongExpectedRevisionError) {
      throw new ConsoleError(`${error.streamName} changed while the console was writing; nothing was appended, try again`);
    }
    throw error;
  }
}

async function changeMember(deps: ConsoleDeps, input: { workspaceId: string; memberId: string }, to: 'active' | 'suspended'): Promise<MemberChange> {
  const { workspaceId, memberId } = input;
  await createTenantDirectory(deps.eventStore, workspaceId).workspace();
  const stream = await readSnapshot(deps.eventStore, streams.member(workspaceId, memberId));
  const member = memberView(stream.events);
  if (member === undefined) throw new ConsoleError(`member ${memberId} does not exist in workspace ${workspaceId}`);
  if (member.status === 'removed') {
    throw new ConsoleError(`member ${memberId} was removed from workspace ${workspaceId}; a removed member cannot be ${to === 'active' ? 'reactivated' : 'suspended'}`);
  }
  if (member.status === to) throw new ConsoleError(`member ${memberId} is already ${to}`);
  const batch = createWriteBatch(workspaceId, deps.clock.now().toISOString(), deps.ids);
  if (to === 'suspended') batch.add(stream.streamName, stream.revision, 'MemberSuspended', { memberId, reason: 'Suspended from the console' });
  else batch.add(stream.streamName, stream.revision, 'MemberReactivated', { memberId });
  await deps.eventStore.appendMany(batch.writes());
  return { workspaceId, memberId, status: to };
}

async function changeTenant(deps: ConsoleDeps, workspaceId: string, to: 'active' | 'suspended'): Promise<TenantChange> {
  const { view, stream } = await createTenantDirectory(deps.eventStore, workspaceId).workspace();
  if (view.status === to) throw new ConsoleError(`workspace ${workspaceId} is already ${to}`);
  const batch = createWriteBatch(workspaceId, deps.clock.now().toISOString(), deps.ids);
  if (to === 'suspended') batch.add(stream.streamName, stream.revision, 'WorkspaceSuspended', { workspaceId, reason: 'Suspended from the console' });
  else batch.add(stream.streamName, stream.revision, 'WorkspaceReactivated', { workspaceId });
  await deps.eventStore.appendMany(batch.writes());
  return { workspaceId, status: to };
}
