import type { EventStore } from '../eventStore/eventStore.js';
import { streams } from '../events/index.js';
import { boxView, type BoxView } from './boxFold.js';
import { ConsoleError } from './consoleError.js';
import { readCategory, readSnapshot, type StreamSnapshot } from './consoleReads.js';
import { clinicView, itemView, memberView, warehouseView, workspaceView, type ClinicView, type ItemView, type MemberView, type WarehouseView, type WorkspaceView } from './tenantFolds.js';

export type Viewed<V> = { readonly view: V; readonly stream: StreamSnapshot };

/** What a console action may need to know about one tenant, each part read once and only on demand. */
export type TenantDirectory = {
  readonly workspaceId: string;
  workspace(): Promise<Viewed<WorkspaceView>>;
  members(): Promise<Viewed<MemberView>[]>;
  clinics(): Promise<Viewed<ClinicView>[]>;
  warehouses(): Promise<Viewed<WarehouseView>[]>;
  items(): Promise<Viewed<ItemView>[]>;
  boxes(): Promise<Viewed<BoxView>[]>;
};

function viewed<V>(snapshots: readonly StreamSnapshot[], fold: (events: StreamSnapshot['events']) => V | undefined): Viewed<V>[] {
  return snapshots.flatMap((stream) => {
    const view = fold(stream.events);
    return view === undefined ? [] : [{ view, stream }];
  });
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

export function createTenantDirectory(eventStore: EventStore, workspaceId: string): TenantDirectory {
  return {
    workspaceId,
    workspace: once(async () => {
      const stream = await readSnapshot(eventStore, streams.workspace(workspaceId));
      const view = workspaceView(stream.events);
      if (view === undefined) throw new ConsoleError(`workspace ${workspaceId} does not exist`);
      return { view, stream };
    }),
    members: once(async () => viewed(await readCategory(eventStore, 'member', workspaceId), memberView)),
    clinics: once(async () => viewed(await readCategory(eventStore, 'clinic', workspaceId), clinicView)),
    warehouses: once(async () => viewed(await readCategory(eventStore, 'warehouse', workspaceId), warehouseView)),
    items: once(async () => viewed(await readCategory(eventStore, 'item', workspaceId), itemView)),
    boxes: once(async () => viewed(await readCategory(eventStore, 'box', workspaceId), boxView)),
  };
}

/** An active member holding `permission` (the owner holds them all), other than those excluded. */
export function memberWith(members: readonly Viewed<MemberView>[], permission: string, excluded: ReadonlySet<string> = new Set()): MemberView | undefined {
  return members.map((m) => m.view).find((m) => m.status === 'active' && m.permissions.includes(permission) && !excluded.has(m.memberId));
}

/** An active member of `role`, preferring one who works at `clinicId`; the owner as last resort. */
export function memberIn(members: readonly Viewed<MemberView>[], role: string, clinicId?: string): MemberView | undefined {
  const active = members.map((m) => m.view).filter((m) => m.status === 'active');
  return (
    active.find((m) => m.role === role && (clinicId === undefined || m.clinicIds.includes(clinicId))) ??
    active.find((m) => m.role === role) ??
    active.find((m) => m.role === 'owner')
  );
}
