import type { EventStore } from '../eventStore/eventStore.js';
import type { Clock } from '../platform/clock.js';
import { ConsoleError } from './consoleError.js';
import type { IdSource } from './consoleIds.js';
import type { StreamSnapshot } from './consoleReads.js';
import type { OrderState } from './orderState.js';
import { memberIn, type TenantDirectory } from './tenantDirectory.js';
import type { WriteBatch } from './writeBatch.js';

export type ConsoleDeps = { readonly eventStore: EventStore; readonly clock: Clock; readonly ids: IdSource };

/** Everything one advance step decides on. */
export type AdvanceStep = {
  readonly deps: ConsoleDeps;
  readonly directory: TenantDirectory;
  readonly order: OrderState;
  readonly orderStream: StreamSnapshot;
  readonly fulfillmentStream: StreamSnapshot;
  readonly batch: WriteBatch;
  readonly now: Date;
};

export async function requireMember(directory: TenantDirectory, role: string, purpose: string, clinicId?: string): Promise<string> {
  const member = memberIn(await directory.members(), role, clinicId);
  if (member === undefined) throw new ConsoleError(`workspace ${directory.workspaceId} has no active member to ${purpose}`);
  return member.memberId;
}

/** High-value items move under the two-person rule. */
export async function witnessFor(directory: TenantDirectory, itemId: string, actorId: string): Promise<{ witnessId?: string }> {
  const item = (await directory.items()).find((i) => i.view.itemId === itemId);
  if (item?.view.highValue !== true) return {};
  const witness = (await directory.members()).map((m) => m.view).find((m) => m.status === 'active' && m.memberId !== actorId && m.role !== 'viewer');
  return witness === undefined ? {} : { witnessId: witness.memberId };
}
