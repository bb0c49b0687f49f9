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
 * The changes one batch makes to one table, folded in memory so that the batch is written with a
 * single multi-row INSERT (rows created in the batch, with every later change already applied)
 * and a single multi-row UPDATE (rows that existed before, one combined patch each). Folding
 * events one by one or in a batch gives the same rows, which the projections' tests check.
 */
export class RowChanges<Row, Patch = Partial<Row>> {
  private readonly createdRows = new Map<string, Row>();
  private readonly patchesByKey = new Map<string, Patch>();
  private readonly applyTo: (row: Row, patch: Patch) => Row;
  private readonly combine: (earlier: Patch, later: Patch) => Patch;

  constructor(
    private readonly what: string,
    options: RowChangesOptions<Row, Patch> = {},
  ) {
    this.applyTo = options.applyTo ?? ((row, patch) => ({ ...row, ...patch }));
    this.combine = options.combine ?? ((earlier, later) => ({ ...earlier, ...later }));
  }

  create(key: string, row: Row): void {
    if (this.createdRows.has(key) || this.patchesByKey.has(key)) {
      throw new ProjectionInvariantError(`${this.what} ${key.replaceAll('\u0000', '/')} created twice`);
    }
    this.createdRows.set(key, row);
  }

  change(key: string, patch: Patch): void {
    const created = this.createdRows.get(key);
    if (created !== undefined) {
      this.createdRows.set(key, this.applyTo(created, patch));
      return;
    }
    const earlier = this.patchesByKey.get(key);
    this.patchesByKey.set(key, earlier === undefined ? patch : this.combine(earlier, patch));
  }

  /** The row created in this batch under `key`, if any. */
  createdRow(key: string): Row | undefined {
    return this.createdRows.get(key);
  }

  get created(): Row[] {
    return [...this.createdRows.values()];
  }

  get patches(): Patch[] {
    return [...this.patchesByKey.values()];
  }
}
