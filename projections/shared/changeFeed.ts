import type { FragmentSqlToken, IdentifierSqlToken } from 'slonik';
import { z } from 'zod';
import type { LogPosition } from '../../src/eventStore/eventStore.js';
import type { RowReader } from '../../src/platform/projectionReader.js';
import { sql, statementTemplate } from '../../src/platform/sql.js';
import { statementsByGuard, type ReadGuard } from './readGuard.js';

/**
 * Where a change feed stands: after the row `id` changed at log position (tx, seq). Rows are ordered
 * by the log position of their last change, then by id (COLLATE "C"); the empty id stands before
 * every row of its position.
 */
export type ChangePosition = { readonly tx: bigint; readonly seq: bigint; readonly id: string };

/** Before every change. */
export const feedStart: ChangePosition = Object.freeze({ tx: 0n, seq: 0n, id: '' });

/** After every row changed at `position` or before it (log positions are consecutive integers within a transaction id). */
export function afterLogPosition(position: LogPosition): ChangePosition {
  return { tx: position.tx, seq: position.seq + 1n, id: '' };
}

export type ChangeFeedOptions = ReadGuard & { readonly after: ChangePosition; readonly limit: number };

export type ChangedRow = { readonly position: ChangePosition; readonly itemJson: string };

export type ChangeFeedRows = {
  /**
   * The checkpoint of the read model's active generation, read in the same statement as the rows:
   * no row it covers is still to be written, and every later change of a row lands after it.
   */
  readonly checkpoint: LogPosition;
  /** Up to `limit + 1` rows after the position, in feed order. */
  readonly rows: readonly ChangedRow[];
};

/** A read model's change feed: which projection, which table, its id column, and its list item as JSON text. */
export type ChangeFeedSource = {
  readonly projection: string;
  /** The read_models view of the table. */
  readonly table: IdentifierSqlToken;
  readonly idColumn: IdentifierSqlToken;
  /** An expression of the table's columns: the item as its list's JSON text. */
  readonly itemJson: FragmentSqlToken;
  /** Checks the item text (when the reader checks rows). */
  readonly itemText: z.ZodTypeAny;
};

const parameters = ['tenantId', 'afterTx', 'afterSeq', 'afterId', 'limit'] as const;

/**
 * The feed of `source`: one statement that reads the active generation's checkpoint and the rows
 * changed after the position up to it, by the index (tenant_id, changed_tx, changed_seq, id). A
 * generation built before its read model had change positions has no changed_tx: the statement
 * fails with undefined_column (42703), which the caller answers as unavailable.
 */
export function changeFeed(source: ChangeFeedSource): (db: RowReader, tenantId: string, options: ChangeFeedOptions) => Promise<ChangeFeedRows> {
  const row = z.object({
    checkpointTx: z.bigint(),
    checkpointSeq: z.bigint(),
    tx: z.bigint().nullable(),
    seq: z.bigint().nullable(),
    id: z.string().nullable(),
    item: source.itemText.nullable(),
  });
  const statement = statementsByGuard(
    (guard) =>
      statementTemplate(
        parameters,
        (parameter) => sql.type(row)`
        SELECT g.checkpoint_tx AS "checkpointTx", g.checkpoint_seq AS "checkpointSeq", c.tx, c.seq, c.id, c.item
        FROM projection_generations AS g
        LEFT JOIN LATERAL (
          SELECT changed_tx AS tx, changed_seq AS seq, ${source.idColumn} AS id, ${source.itemJson} AS item
          FROM ${source.table}
          WHERE tenant_id = ${parameter.tenantId}
            AND (changed_tx, changed_seq, ${source.idColumn}) > (${parameter.afterTx}, ${parameter.afterSeq}, ${parameter.afterId})
            AND (changed_tx, changed_seq) <= (g.checkpoint_tx, g.checkpoint_seq)
          ORDER BY changed_tx, changed_seq, ${source.idColumn}
          LIMIT ${parameter.limit}
        ) AS c ON true
        WHERE g.projection = ${source.projection} AND g.state = 'active' ${guard === undefined ? sql.fragment`` : sql.fragment`AND ${guard}`}
        ORDER BY c.tx, c.seq, c.id
      `,
      ),
    () => '',
  );
  return async (db, tenantId, { after, limit, guard }) => {
    const values = { tenantId, afterTx: after.tx, afterSeq: after.seq, afterId: after.id, limit: limit + 1 };
    const found = await db.rows(statement(guard, undefined)(values), { fromColumns: rowOfColumns });
    const first = found[0];
    const checkpoint = first === undefined ? { tx: 0n, seq: 0n } : { tx: first.checkpointTx, seq: first.checkpointSeq };
    const rows: ChangedRow[] = [];
    for (const { tx, seq, id, item } of found) {
      if (tx !== null && seq !== null && id !== null && item !== null) rows.push({ position: { tx, seq, id }, itemJson: item as string });
    }
    return { checkpoint, rows };
  };
}

type FeedRow = { checkpointTx: bigint; checkpointSeq: bigint; tx: bigint | null; seq: bigint | null; id: string | null; item: unknown };

/** A row of the feed statement, from its values in column order. */
const rowOfColumns = ([checkpointTx, checkpointSeq, tx, seq, id, item]: readonly unknown[]) => ({ checkpointTx, checkpointSeq, tx, seq, id, item }) as FeedRow;
