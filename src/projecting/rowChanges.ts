import { ProjectionInvariantError } from './projection.js';

/** Key of a row within a batch: the tenant first, as in every table key. */
export function rowKey(tenantId: string, ...ids: readonly string[]): string {
  let key = tenantId;
  for (const id of ids) key += `\u0000${id}`;
  return key;
}

export type RowChangesOptions<Row, Patch> = {
  /** What a patch does to a row created earlier in the same batch. */
  readonly applyTo?: (row: Row, patch: Patch) => Row;
  /** Two patches of a row that existed before the batch, in event order, as one. */
  readonly combine?: (earlier: Patch, later: Patch) => Patch;
};

/**
 * Values by (tenant, id), looked up without building a key: a map of maps, with the insertion
 * order kept for iteration (the order a write sends its rows in).
 */
export class TenantMap<V> {
  private readonly byTenant = new Map<string, Map<string, { value: V }>>();
  private readonly entries: { value: V }[] = [];

  get size(): number {
    return this.entries.length;
  }

  get(tenantId: string, id: string): V | undefined {
    return this.byTenant.get(tenantId)?.get(id)?.value;
  }

  has(tenantId: string, id: string): boolean {
    return this.byTenant.get(tenantId)?.has(id) === true;
  }

  set(tenantId: string, id: string, value: V): void {
    let ids = this.byTenant.get(tenantId);
    if (ids === undefined) this.byTenant.set(tenantId, (ids = new Map()));
    const entry = ids.get(id);
    if (entry !== undefined) {
      entry.value = value;
      return;
    }
    const added = { value };
    ids.set(id, added);
    this.entries.push(added);
  }

  /** The values, in the order their keys were first set. */
  values(): V[] {
    return this.entries.map((entry) => entry.value);
  }
}

/**
 * The changes one batch makes to one table, folded in memory so that the batch is written with a
 * single multi-row INSERT (rows created in the batch, with every later change already applied)
 * and a single multi-row UPDATE (rows that existed before, one combined patch each). Folding
 * events one by one or in a batch gives the same rows, which the projections' tests check. Rows
 * are keyed by tenant and id (`''` for a table keyed by the tenant alone), looked up as they are:
 * no key string is built per event.
 */
export class RowChanges<Row, Patch = Partial<Row>> {
  private readonly createdRows = new TenantMap<Row>();
  private readonly patchesByKey = new TenantMap<Patch>();
  private readonly applyTo: (row: Row, patch: Patch) => Row;
  private readonly combine: (earlier: Patch, later: Patch) => Patch;

  constructor(
    private readonly what: string,
    options: RowChangesOptions<Row, Patch> = {},
  ) {
    this.applyTo = options.applyTo ?? ((row, patch) => ({ ...row, ...patch }));
    this.combine = options.combine ?? ((earlier, later) => ({ ...earlier, ...later }));
  }

  create(tenantId: string, id: string, row: Row): void {
    if (this.createdRows.has(tenantId, id) || this.patchesByKey.has(tenantId, id)) {
      throw new ProjectionInvariantError(`${this.what} ${id === '' ? tenantId : `${tenantId}/${id}`} created twice`);
    }
    this.createdRows.set(tenantId, id, row);
  }

  change(tenantId: string, id: string, patch: Patch): void {
    const created = this.createdRows.get(tenantId, id);
    if (created !== undefined) {
      this.createdRows.set(tenantId, id, this.applyTo(created, patch));
      return;
    }
    const earlier = this.patchesByKey.get(tenantId, id);
    this.patchesByKey.set(tenantId, id, earlier === undefined ? patch : this.combine(earlier, patch));
  }

  /**
   * The patch of the row under (tenant, id) that existed before this batch, if it has one: a
   * projection whose patches are its own may fold a later change into it in place.
   */
  patchOf(tenantId: string, id: string): Patch | undefined {
    return this.patchesByKey.get(tenantId, id);
  }

  /** The row created in this batch under (tenant, id), if any. */
  createdRow(tenantId: string, id: string): Row | undefined {
    return this.createdRows.get(tenantId, id);
  }

  get created(): Row[] {
    return this.createdRows.values();
  }

  get patches(): Patch[] {
    return this.patchesByKey.values();
  }
}
