import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import type { z } from 'zod';
import type { RowReader } from '../../src/platform/projectionReader.js';
import { sql, statementTemplate } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { guardCondition, statementsByGuard, type ReadGuard } from '../shared/readGuard.js';
import { changeFeed } from '../shared/changeFeed.js';
import { storedJsonOrColumns, storedJsonText } from '../shared/storedJson.js';
import { boxBalanceEntryRow, boxBalanceRow, boxRow, type Box, type BoxBalance, type BoxBalanceEntry } from './schema.js';

export type BalancePage = ReadGuard & {
  /** Keyset position: the last box id of the previous page (the API layer signs it into a cursor). */
  readonly afterBoxId?: string;
  readonly limit: number;
  readonly catalogItemId?: string;
  readonly warehouseId?: string;
};

const balanceColumns = sql.fragment`
  box_id AS "boxId", catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId",
  on_hand::float8 AS "onHand", reserved::float8 AS reserved, (on_hand - reserved)::float8 AS available
`;

/** Balances come from balance_json, or from the columns on a generation built before it. */
const fromStoredJson = storedJsonOrColumns();

/**
 * Box balances of the tenant by box id (byte order), after `afterBoxId`: up to `limit + 1` entries,
 * so that the caller knows whether another page exists. Each entry's balance is its stored JSON
 * text (boxes.balance_json); on a generation built by the previous definition of boxes (version
 * 1), the same text serialised here from the columns.
 */
export async function listBalances(db: RowReader, tenantId: string, page: BalancePage): Promise<readonly BoxBalanceEntry[]> {
  const { afterBoxId = null, catalogItemId = null, warehouseId = null } = page;
  const filters = { after: afterBoxId !== null, catalogItem: catalogItemId !== null, warehouse: warehouseId !== null };
  const values = { tenantId, afterBoxId, catalogItemId, warehouseId, limit: page.limit + 1 };
  return fromStoredJson(
    () => db.rows(balanceEntryStatement(page.guard, filters)(values), { fromColumns: entryOfColumns }),
    async () => {
      const balances = await db.rows(balanceStatement(page.guard, filters)(values), { fromColumns: balanceOfColumns });
      return balances.map((balance) => ({ boxId: balance.boxId, balance: JSON.stringify(balance) }));
    },
  );
}

type BalanceFilters = { readonly after: boolean; readonly catalogItem: boolean; readonly warehouse: boolean };
const balanceParameters = ['tenantId', 'afterBoxId', 'catalogItemId', 'warehouseId', 'limit'] as const;
const filtersKey = (filters: BalanceFilters) => `${Number(filters.after)}${Number(filters.catalogItem)}${Number(filters.warehouse)}`;

/** The balance page statements for a guard and the filters in use, built once: stored JSON text, or the columns. */
const balanceEntryStatement = statementsByGuard(
  (guard, filters: BalanceFilters) => balanceListTemplate(boxBalanceEntryRow, sql.fragment`box_id AS "boxId", balance_json AS balance`, guard, filters),
  filtersKey,
);
const balanceStatement = statementsByGuard(
  (guard, filters: BalanceFilters) => balanceListTemplate(boxBalanceRow, balanceColumns, guard, filters),
  filtersKey,
);

function balanceListTemplate<Row extends z.AnyZodObject>(row: Row, columns: FragmentSqlToken, guard: FragmentSqlToken | undefined, filters: BalanceFilters) {
  const none = sql.fragment``;
  return statementTemplate(
    balanceParameters,
    (parameter) => sql.type(row)`
    SELECT ${columns}
    FROM read_models.boxes
    WHERE tenant_id = ${parameter.tenantId} ${guardCondition(guard)}
      ${filters.after ? sql.fragment`AND box_id > ${parameter.afterBoxId}` : none}
      ${filters.catalogItem ? sql.fragment`AND catalog_item_id = ${parameter.catalogItemId}` : none}
      ${filters.warehouse ? sql.fragment`AND warehouse_id = ${parameter.warehouseId}` : none}
    ORDER BY box_id
    LIMIT ${parameter.limit}
  `,
  );
}

/** A row of `balanceColumns`, from its values in that order. */
const balanceOfColumns = ([boxId, catalogItemId, warehouseId, onHand, reserved, available]: readonly unknown[]): BoxBalance =>
  ({ boxId, catalogItemId, warehouseId, onHand, reserved, available }) as BoxBalance;

/** An entry of the balances list, from its two columns. */
const entryOfColumns = ([boxId, balance]: readonly unknown[]): BoxBalanceEntry => ({ boxId, balance }) as BoxBalanceEntry;

/**
 * One box of the tenant (by id, not its printed code), or undefined. `expiresOn` goes through
 * to_char so that its text does not depend on the session's DateStyle.
 */
export async function getBox(db: CommonQueryMethods, tenantId: string, boxId: string): Promise<Box | undefined> {
  const box = await db.maybeOne(sql.type(withoutNullColumns(boxRow))`
    SELECT box_id AS "boxId", code, catalog_item_id AS "catalogItemId", warehouse_id AS "warehouseId", status,
      lot, serials, to_char(expires_on, 'YYYY-MM-DD') AS "expiresOn",
      jsonb_strip_nulls(jsonb_build_object('type', origin_type, 'reference', origin_reference)) AS origin
    FROM read_models.boxes
    WHERE tenant_id = ${tenantId} AND box_id = ${boxId}
  `);
  return box ?? undefined;
}

/** The quantities of one box of the tenant, or undefined. */
export async function getBoxBalance(db: CommonQueryMethods, tenantId: string, boxId: string): Promise<BoxBalance | undefined> {
  const balance = await db.maybeOne(sql.type(boxBalanceRow)`
    SELECT ${balanceColumns}
    FROM read_models.boxes
    WHERE tenant_id = ${tenantId} AND box_id = ${boxId}
  `);
  return balance ?? undefined;
}

/**
 * The boxes of the tenant changed after a position, by the log position of their last change
 * (changed_tx, changed_seq), each as its balance's stored JSON text.
 */
export const listBalanceChanges = changeFeed({
  projection: 'boxes',
  table: sql.identifier(['read_models', 'boxes']),
  idColumn: sql.identifier(['box_id']),
  itemJson: sql.fragment`balance_json`,
  itemText: storedJsonText(boxBalanceRow),
});
