import type { StreamWrite } from '../eventStore/eventStore.js';

/** A member as the seeded history leaves it. */
export type MemberSummary = {
  readonly memberId: string;
  readonly status: 'active' | 'suspended' | 'removed';
  readonly permissions: readonly string[];
};

/**
 * What `supply-api seed` prints: per tenant, the ids a demo or a test needs (owner first among
 * members), and every member with its status and permissions at the end of the history (never a
 * name or an email), so that a caller can pick members by what they may do.
 */
export type TenantSummary = {
  readonly workspaceId: string;
  readonly memberIds: readonly string[];
  readonly members: readonly MemberSummary[];
  readonly clinicIds: readonly string[];
  readonly warehouseIds: readonly string[];
  readonly orderIds: readonly string[];
  readonly boxIds: readonly string[];
  readonly itemIds: readonly string[];
};

export type SeedSummary = { readonly tenants: readonly TenantSummary[] };

type IdList = { add(id: string): void; ids(): string[] };

/**
 * All ids, or at most `limit`: the first half and the most recent half in creation order, so that
 * a sample holds both long-settled records and ones still in flight at asOf.
 */
function idList(limit: number | undefined): IdList {
  const head: string[] = [];
  const tail: string[] = [];
  let tailStart = 0;
  const headSize = limit === undefined ? Number.POSITIVE_INFINITY : Math.ceil(limit / 2);
  const tailSize = limit === undefined ? 0 : limit - headSize;
  return {
    add: (id) => {
      if (head.length < headSize) {
        head.push(id);
      } else if (tail.length < tailSize) {
        tail.push(id);
      } else if (tailSize > 0) {
        tail[tailStart] = id;
        tailStart = (tailStart + 1) % tailSize;
      }
    },
    ids: () => [...head, ...tail.slice(tailStart), ...tail.slice(0, tailStart)],
  };
}

type Lists = { [K in Exclude<keyof TenantSummary, 'workspaceId' | 'members'>]: IdList } & {
  /** Every member, in joining order (members are few, so never sampled). */
  readonly members: Map<string, { status: MemberSummary['status']; permissions: readonly string[] }>;
};

/** Builds the seed summary from the writes as they go by. */
export function createSummaryCollector(limit: number | undefined): { observe(write: StreamWrite): void; summary(): SeedSummary } {
  const tenants = new Map<string, Lists>();
  const listsOf = (tenantId: string): Lists => {
    let lists = tenants.get(tenantId);
    if (lists === undefined) {
      lists = {
        memberIds: idList(limit),
        clinicIds: idList(limit),
        warehouseIds: idList(limit),
        orderIds: idList(limit),
        boxIds: idList(limit),
        itemIds: idList(limit),
        members: new Map(),
      };
      tenants.set(tenantId, lists);
    }
    return lists;
  };
  return {
    observe: (write) => {
      for (const event of write.events) {
        switch (event.type) {
          case 'WorkspaceCreated':
            listsOf(event.data.workspaceId);
            break;
          case 'MemberJoined':
            listsOf(event.tenantId).memberIds.add(event.data.memberId);
            listsOf(event.tenantId).members.set(event.data.memberId, { status: 'active', permissions: [...event.data.permissions] });
            break;
          case 'MemberSuspended':
          case 'MemberReactivated':
          case 'MemberRemoved': {
            const member = listsOf(event.tenantId).members.get(event.data.memberId);
            // Removal is final, as the console and the projections treat it.
            if (member !== undefined && member.status !== 'removed') {
              member.status = event.type === 'MemberSuspended' ? 'suspended' : event.type === 'MemberReactivated' ? 'active' : 'removed';
            }
            break;
          }
          case 'ClinicOpened':
            listsOf(event.tenantId).clinicIds.add(event.data.clinicId);
            break;
          case 'WarehouseOpened':
            listsOf(event.tenantId).warehouseIds.add(event.data.warehouseId);
            break;
          case 'OrderDrafted':
            listsOf(event.tenantId).orderIds.add(event.data.orderId);
            break;
          case 'BoxRegistered':
            listsOf(event.tenantId).boxIds.add(event.data.boxId);
            break;
          case 'CatalogItemDefined':
            listsOf(event.tenantId).itemIds.add(event.data.itemId);
            break;
          default:
            break;
        }
      }
    },
    summary: () => ({
      tenants: [...tenants.entries()].map(([workspaceId, lists]) => ({
        workspaceId,
        memberIds: lists.memberIds.ids(),
        members: [...lists.members].map(([memberId, member]) => ({ memberId, status: member.status, permissions: [...member.permissions] })),
        clinicIds: lists.clinicIds.ids(),
        warehouseIds: lists.warehouseIds.ids(),
        orderIds: lists.orderIds.ids(),
        boxIds: lists.boxIds.ids(),
        itemIds: lists.itemIds.ids(),
      })),
    }),
  };
}
