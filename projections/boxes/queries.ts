import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import type { RowReader } from '../../src/platform/projectionReader.js';
import { sql, statementTemplate } from '../../src/platform/sql.js';
import { withoutNullColumns } from '../shared/absentFields.js';
import { guardCondition, statementsByGuard, type ReadGuard } from '../shared/readGuard.js';
import { boxBalanceRow, boxRow, type Box, type BoxBalance } from './schema.js';

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

/**
 * Box balances of the tenant by box id (byte order), after `afterBoxId`: up to `limit + 1` rows,
 * so that the caller knows whether another page exists.
 */
export async function listBalances(db: RowReader, tenantId: string, page: BalancePage): Promise<readonly BoxBalance[]> {
  const { afterBoxId = null, catalogItemId = null, warehouseId = null } = page;
  const statement = balanceStatement(page.guard, { after: afterBoxId !== null, catalogItem: catalogItemId !== null, warehouse: warehouseId !== null });
  return db.rows(statement({ tenantId, afterBoxId, catalogItemId, warehouseId, limit: page.limit + 1 }), { fromColumns: balanceOfColumns });
}

type BalanceFilters = { readonly after: boolean; readonly catalogItem: boolean; readonly warehouse: boolean };
const balanceParameters = ['tenantId', 'afterBoxId', 'catalogItemId', 'warehouseId', 'limit'] as const;

/** The balance page statement for a guard and the filters in use, built once. */
const balanceStatement = statementsByGuard(
  balanceListTemplate,
  (filters: BalanceFilters) => `${Number(filters.after)}${Number(filters.catalogItem)}${Number(filters.warehouse)}`,
);

function balanceListTemplate(guard: FragmentSqlToken | undefined, filters: BalanceFilters) {
  const none = sql.fragment``;
  return statementTemplate(
    balanceParameters,
    (parameter) => sql.type(boxBalanceRow)`
    SELECT ${balanceColumns}
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
