import type { StreamWrite } from '../eventStore/eventStore.js';

/** What `supply-api seed` prints: per tenant, the ids a demo or a test needs (owner first among members). */
export type TenantSummary = {
  readonly workspaceId: string;
  readonly memberIds: readonly string[];
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

type Lists = { [K in Exclude<keyof TenantSummary, 'workspaceId'>]: IdList };

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
            break;
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
        clinicIds: lists.clinicIds.ids(),
        warehouseIds: lists.warehouseIds.ids(),
        orderIds: lists.orderIds.ids(),
        boxIds: lists.boxIds.ids(),
        itemIds: lists.itemIds.ids(),
      })),
    }),
  };
}
