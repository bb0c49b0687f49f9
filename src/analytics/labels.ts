import type { ApprovalBand, CycleStage, MetricKey } from './definitions.js';

/** Languages of human labels (the same three as problem documents). */
export type LabelLanguage = 'en' | 'es' | 'pt';
type Localized = Readonly<Record<LabelLanguage, string>>;

const metricLabels: Readonly<Record<MetricKey, Localized>> = {
  LOW_STOCK: { en: 'Items below their reorder point', es: 'Artículos por debajo del punto de pedido', pt: 'Itens abaixo do ponto de reposição' },
  EXPIRING_STOCK: {
    en: 'Boxes expired or expiring within 30 days',
    es: 'Cajas caducadas o que caducan en 30 días',
    pt: 'Caixas vencidas ou a vencer em 30 dias',
  },
  PENDING_ORDERS: { en: 'Orders not yet dispatched', es: 'Pedidos aún no despachados', pt: 'Pedidos ainda não despachados' },
  APPROVAL_BACKLOG: { en: 'Orders awaiting approval', es: 'Pedidos pendientes de aprobación', pt: 'Pedidos aguardando aprovação' },
  DELIVERY_EXCEPTIONS: { en: 'Open delivery exceptions', es: 'Incidencias de entrega abiertas', pt: 'Ocorrências de entrega abertas' },
  RECEIPT_DISCREPANCIES: { en: 'Open receipt discrepancies', es: 'Discrepancias de recepción abiertas', pt: 'Divergências de recebimento abertas' },
  ORDER_CYCLE_TIME: { en: 'Average order cycle time', es: 'Tiempo medio de ciclo del pedido', pt: 'Tempo médio de ciclo do pedido' },
  CONSUMPTION_TREND: { en: 'Consumption', es: 'Consumo', pt: 'Consumo' },
};

const bandLabels: Readonly<Record<ApprovalBand, Localized>> = {
  under_24h: { en: 'Awaiting approval under 24 h', es: 'Pendientes de aprobación menos de 24 h', pt: 'Aguardando aprovação há menos de 24 h' },
  '24h_to_72h': { en: 'Awaiting approval 24–72 h', es: 'Pendientes de aprobación 24–72 h', pt: 'Aguardando aprovação há 24–72 h' },
  '72h_to_168h': { en: 'Awaiting approval 72–168 h', es: 'Pendientes de aprobación 72–168 h', pt: 'Aguardando aprovação há 72–168 h' },
  over_168h: { en: 'Awaiting approval 168 h or more', es: 'Pendientes de aprobación 168 h o más', pt: 'Aguardando aprovação há 168 h ou mais' },
};

const stageLabels: Readonly<Record<CycleStage, Localized>> = {
  submitted_to_approved: { en: 'Submitted to approved', es: 'De enviado a aprobado', pt: 'De enviado a aprovado' },
  approved_to_dispatched: { en: 'Approved to dispatched', es: 'De aprobado a despachado', pt: 'De aprovado a despachado' },
  dispatched_to_delivered: { en: 'Dispatched to delivered', es: 'De despachado a entregado', pt: 'De despachado a entregue' },
  delivered_to_received: { en: 'Delivered to received', es: 'De entregado a recibido', pt: 'De entregue a recebido' },
  submitted_to_received: { en: 'Submitted to received', es: 'De enviado a recibido', pt: 'De enviado a recebido' },
};

const consumptionLabel: Localized = { en: 'Consumption: {name}', es: 'Consumo: {name}', pt: 'Consumo: {name}' };

export function metricLabel(metric: MetricKey, language: LabelLanguage): string {
  return metricLabels[metric][language];
}

/**
 * The label of one row of a multi-row metric: an approval band, a cycle stage, or a supply's
 * consumption (the item's name, as the catalog has it, is filled in verbatim).
 */
export function dimensionLabel(metric: MetricKey, dimension: string, language: LabelLanguage, name?: string): string {
  if (metric === 'APPROVAL_BACKLOG' && dimension in bandLabels) return bandLabels[dimension as ApprovalBand][language];
  if (metric === 'ORDER_CYCLE_TIME' && dimension in stageLabels) return stageLabels[dimension as CycleStage][language];
  if (metric === 'CONSUMPTION_TREND') return consumptionLabel[language].replace('{name}', name ?? dimension);
  return metricLabels[metric][language];
}

/** English definitions of each figure, as the OpenAPI document and responses state them. */
export const metricDefinitions: Readonly<Record<MetricKey, string>> = {
  LOW_STOCK:
    'Stock levels (catalog item × warehouse that has held the item) of an active item in an active warehouse whose available quantity (on hand minus reserved, over active boxes) is below the item\'s reorder point.',
  EXPIRING_STOCK:
    'Boxes with stock on hand, not depleted or disposed, whose expiry date is at most 30 days after the UTC date of asOf (already expired boxes included).',
  PENDING_ORDERS: 'Orders placed and not yet dispatched: status submitted, pending_approval, approved, allocated or picking.',
  APPROVAL_BACKLOG:
    'Orders in pending_approval, by time waited since they entered it (asOf minus that time), in bands of under 24 h, 24–72 h, 72–168 h and 168 h or more.',
  DELIVERY_EXCEPTIONS: 'Delivery exceptions raised and not yet resolved.',
  RECEIPT_DISCREPANCIES: 'Discrepancy lines of the latest receipt of orders whose fulfillment is not yet closed.',
  ORDER_CYCLE_TIME:
    'Average hours between the first time an order reached one milestone and the next (submitted, approved, dispatched, delivered, received), over stages completed on the UTC days of the window; the value is submitted to received.',
  CONSUMPTION_TREND:
    'Quantity used by consume movements per supply in its own unit of measure, on the UTC day the movement occurred (returns are not netted); the value is the number of consume movements in the window.',
};
