import { stateMetrics, windowMetrics } from '../analytics/definitions.js';

/**
 * The tools of /mcp, one per /v1 read operation (named by its operationId), and what each tells a
 * model: what it answers and when to use it. Operations missing here (key identity, exports) are
 * not tools.
 */
export const toolDescriptions: Readonly<Record<string, string>> = {
  listClinics:
    'Lists every clinic (location) of the dental organisation with its id, name and status. Use it to learn clinic names and ids before asking about orders, stock or analytics of a particular clinic.',
  listWarehouses:
    'Lists every warehouse with its kind: `central` (serves the whole organisation) or `express` (belongs to one clinic, see clinicId). Use it to translate warehouse ids into places, or to pick a warehouseId for the stock balance tool.',
  listCatalogItems:
    'Lists every supply in the catalog (all statuses) with sku, name, category, unit of measure, criticality and tracking flags; cost fields appear only when the signed-in member may see costs. Use it to find a catalogItemId from a product name, or to answer questions about the catalog.',
  getCatalogItem: 'Returns one catalog item by its itemId. Use it when you already have an item id (from an order line, a balance or an exception) and need its name, unit or tracking rules.',
  listCatalogCategories: 'Lists the catalog categories (with parent categories). Use it to name the category ids that catalog items and order lines carry.',
  listInventoryBalances:
    'Lists stock quantities per box (onHand, reserved, available) in the item\'s own unit, ordered by boxId, paginated with `limit` (1–200) and `cursor` (the nextCursor of the previous page). Narrow it with `catalogItemId` and/or `warehouseId` to answer "how much X do we have in warehouse Y". Never add quantities of different items or units.',
  listInventoryBalanceChanges:
    'Lists the box balances that changed since `cursor` (the `syncCursor` of an earlier answer; none: from the beginning), oldest change first, each once with onHand, reserved and available. Use it to learn which stock moved since you last looked.',
  getInventoryBox: 'Returns one stock box by boxId (not its printed code): item, warehouse, status, lot, serials, expiry date and origin. Use it to explain a box named in a balance, movement or exception.',
  getInventoryBoxBalance: 'Returns the current onHand, reserved and available quantity of one box. Use it for a quick stock check of a box you already know.',
  listInventoryBoxMovements:
    'Returns the full stock ledger of one box, oldest first: receipts, consumption, reservations, transfers, adjustments, with who and when. Use it to explain how a box reached its current quantity.',
  listOrders:
    'Lists supply orders, oldest first, paginated with `limit` (1–200) and `cursor` (the nextCursor of the previous page); `status` filters (draft, submitted, pending_approval, approved, rejected, cancelled, allocated, picking, dispatched, delivered, exception, received, partially_fulfilled, closed). Use it to find orders by state or to browse recent ones; list items carry no lines, so call getOrder for details.',
  listOrderChanges:
    'Lists the orders created or changed since `cursor` (the `syncCursor` of an earlier answer; none: from the beginning), oldest change first, each once in its list form; keep the answer\'s `syncCursor` to ask again later. Use it to learn what changed since you last looked.',
  getOrder:
    'Returns one order by its orderId (not its human number) with lines, quantities, clinic, destination warehouse and approval plan. Use it to answer what an order contains, where it goes and what approval it needs. An unknown id answers orders.not_found.',
  listFulfillments:
    'Lists delivery records (fulfillments), oldest first, paginated with `limit` and `cursor`; `status` filters. Use it to follow deliveries in progress or find those in a given state.',
  listFulfillmentChanges:
    'Lists the delivery records dispatched or changed since `cursor` (the `syncCursor` of an earlier answer; none: from the beginning), oldest change first, each once. Use it to learn which deliveries moved since you last looked.',
  getFulfillment:
    'Returns the custody history of one order\'s delivery by orderId: movements, delivery exceptions, and delivery, receipt and closure once they exist. Use it to answer where a delivery is or what went wrong with it.',
  getMetric:
    `Returns one analytics metric with its definition and evidence: ${stateMetrics.join(', ')} (state now), ${windowMetrics.join(' or ')} (over a window \`from\`–\`to\`, dates YYYY-MM-DD, default the last 30 days). Use it for a single headline figure.`,
  getExceptions:
    'Lists what needs attention now, highest priority first: delivery exceptions, expired or expiring stock, low stock, receipt discrepancies and pending approvals, each with a drill-down id (order, fulfillment, box or catalog item). Use it to answer "what should I look at today"; `catalogItemId` narrows the stock exceptions to one supply.',
  getClinicComparison: 'Compares clinics by number of orders (all statuses) and orders awaiting approval. Use it for "which clinic orders most" or "where are approvals piling up". Counts only, no money.',
  getConsumptionTrend:
    'Returns consumption per supply in its own unit by day or ISO week (`granularity`) over a window `from`–`to` (YYYY-MM-DD, at most 366 days, default the last 30 days). Use it for usage trends and forecasting questions.',
  getApprovalBacklog: 'Returns orders awaiting approval grouped by how long they have waited (age bands). Use it to judge whether approvals are late.',
  getCycleTime: 'Returns the average hours each order stage takes (submission to approval, picking, dispatch, delivery, receipt) over a window. Use it to find where orders slow down.',
  getBriefing:
    'Returns the management briefing: the key figures of the organisation for a `period` (daily or weekly) with labels, units and evidence ids. Use it first for a general "how are we doing" question, then drill down with the other tools.',
};
