import { problemCodes, problemStatuses, type InvalidRequestCause, type ProblemCode } from '../../platform/errors.js';
import type { Language } from '../language.js';

type Localized = Readonly<Record<Language, string>>;

type ProblemText = { readonly title: Localized; readonly detail: Localized };
type ProblemDefinition = ProblemText & { readonly status: number };

/**
 * The human text of every problem code (the codes and their statuses: src/platform/errors.ts).
 * Clients branch on the code; title and detail are for people and may be reworded at any time.
 */
const problemTexts = {
  'common.invalid_request': {
    title: { en: 'Invalid request', es: 'Solicitud no válida', pt: 'Requisição inválida' },
    detail: {
      en: 'The request cannot be processed as sent; retrying it unchanged fails again.',
      es: 'La solicitud no se puede procesar tal como se envió; repetirla sin cambios volverá a fallar.',
      pt: 'A requisição não pode ser processada como foi enviada; repeti-la sem alterações falhará novamente.',
    },
  },
  'api_keys.invalid': {
    title: { en: 'Invalid API key', es: 'Clave de API no válida', pt: 'Chave de API inválida' },
    detail: {
      en: 'Send a valid, active API key as "Authorization: Bearer <API_KEY>".',
      es: 'Envíe una clave de API válida y activa como "Authorization: Bearer <API_KEY>".',
      pt: 'Envie uma chave de API válida e ativa como "Authorization: Bearer <API_KEY>".',
    },
  },
  'api_keys.scope_missing': {
    title: { en: 'Scope missing', es: 'Falta un permiso', pt: 'Escopo ausente' },
    detail: {
      en: 'The API key does not hold the scope this operation requires.',
      es: 'La clave de API no tiene el permiso que requiere esta operación.',
      pt: 'A chave de API não possui o escopo exigido por esta operação.',
    },
  },
  'common.forbidden': {
    title: { en: 'Forbidden', es: 'Prohibido', pt: 'Proibido' },
    detail: {
      en: 'This operation is not allowed for the caller.',
      es: 'Esta operación no está permitida para quien la solicita.',
      pt: 'Esta operação não é permitida para o solicitante.',
    },
  },
  'catalog.item_not_found': {
    title: { en: 'Catalog item not found', es: 'Artículo de catálogo no encontrado', pt: 'Item do catálogo não encontrado' },
    detail: {
      en: 'No catalog item with this id exists in this workspace.',
      es: 'No existe ningún artículo de catálogo con este id en este espacio de trabajo.',
      pt: 'Não existe item do catálogo com este id neste espaço de trabalho.',
    },
  },
  'inventory.box_not_found': {
    title: { en: 'Box not found', es: 'Caja no encontrada', pt: 'Caixa não encontrada' },
    detail: {
      en: 'No stock box with this id exists in this workspace.',
      es: 'No existe ninguna caja de stock con este id en este espacio de trabajo.',
      pt: 'Não existe caixa de estoque com este id neste espaço de trabalho.',
    },
  },
  'orders.not_found': {
    title: { en: 'Order not found', es: 'Pedido no encontrado', pt: 'Pedido não encontrado' },
    detail: {
      en: 'No order with this id exists in this workspace.',
      es: 'No existe ningún pedido con este id en este espacio de trabajo.',
      pt: 'Não existe pedido com este id neste espaço de trabalho.',
    },
  },
  'common.not_found': {
    title: { en: 'Not found', es: 'No encontrado', pt: 'Não encontrado' },
    detail: {
      en: 'The resource does not exist in this workspace.',
      es: 'El recurso no existe en este espacio de trabajo.',
      pt: 'O recurso não existe neste espaço de trabalho.',
    },
  },
  'common.method_not_allowed': {
    title: { en: 'Method not allowed', es: 'Método no permitido', pt: 'Método não permitido' },
    detail: {
      en: 'This path does not accept this HTTP method; the Allow header lists the methods it accepts.',
      es: 'Esta ruta no acepta este método HTTP; la cabecera Allow indica los métodos que acepta.',
      pt: 'Este caminho não aceita este método HTTP; o cabeçalho Allow lista os métodos aceitos.',
    },
  },
  'common.payload_too_large': {
    title: { en: 'Request body too large', es: 'Cuerpo de la solicitud demasiado grande', pt: 'Corpo da requisição grande demais' },
    detail: {
      en: 'The request body is larger than the service accepts.',
      es: 'El cuerpo de la solicitud es mayor de lo que el servicio acepta.',
      pt: 'O corpo da requisição é maior do que o serviço aceita.',
    },
  },
  'common.request_header_too_large': {
    title: { en: 'Request headers too large', es: 'Cabeceras de la solicitud demasiado grandes', pt: 'Cabeçalhos da requisição grandes demais' },
    detail: {
      en: 'The request line and headers together are larger than the service accepts.',
      es: 'La línea de solicitud y las cabeceras juntas superan lo que el servicio acepta.',
      pt: 'A linha de requisição e os cabeçalhos juntos são maiores do que o serviço aceita.',
    },
  },
  'common.request_timeout': {
    title: { en: 'Request timeout', es: 'Tiempo de solicitud agotado', pt: 'Tempo da requisição esgotado' },
    detail: {
      en: 'The request line, headers or body did not arrive in time; the connection is closed.',
      es: 'La línea de solicitud, las cabeceras o el cuerpo no llegaron a tiempo; la conexión se cierra.',
      pt: 'A linha de requisição, os cabeçalhos ou o corpo não chegaram a tempo; a conexão é fechada.',
    },
  },
  'common.expectation_failed': {
    title: { en: 'Expectation failed', es: 'Expectativa no satisfecha', pt: 'Expectativa não atendida' },
    detail: {
      en: 'The Expect header asks for something this service does not do; the only expectation it meets is 100-continue.',
      es: 'La cabecera Expect pide algo que este servicio no hace; la única expectativa que satisface es 100-continue.',
      pt: 'O cabeçalho Expect pede algo que este serviço não faz; a única expectativa que ele atende é 100-continue.',
    },
  },
  'common.too_many_requests': {
    title: { en: 'Too many requests', es: 'Demasiadas solicitudes', pt: 'Requisições demais' },
    detail: {
      en: 'The request budget of this API key for the current window is used up; wait Retry-After seconds.',
      es: 'El presupuesto de solicitudes de esta clave de API para la ventana actual se ha agotado; espere los segundos indicados en Retry-After.',
      pt: 'O limite de requisições desta chave de API para a janela atual acabou; aguarde os segundos indicados em Retry-After.',
    },
  },
  'common.internal_error': {
    title: { en: 'Internal error', es: 'Error interno', pt: 'Erro interno' },
    detail: {
      en: 'An unexpected error occurred. Quote the requestId when contacting support.',
      es: 'Se produjo un error inesperado. Indique el requestId al contactar con soporte.',
      pt: 'Ocorreu um erro inesperado. Informe o requestId ao contatar o suporte.',
    },
  },
  'common.service_unavailable': {
    title: { en: 'Service unavailable', es: 'Servicio no disponible', pt: 'Serviço indisponível' },
    detail: {
      en: 'This operation is not available for a moment (the database is failing over, or a read model is being rebuilt); retry after Retry-After seconds (a change feed: with the same cursor).',
      es: 'Esta operación no está disponible por un momento (la base de datos está cambiando de servidor o se está reconstruyendo un modelo de lectura); reintente tras los segundos de Retry-After (un feed de cambios: con el mismo cursor).',
      pt: 'Esta operação está indisponível por um momento (o banco de dados está trocando de servidor ou um modelo de leitura está sendo reconstruído); tente novamente após os segundos de Retry-After (um feed de alterações: com o mesmo cursor).',
    },
  },
} as const satisfies Record<ProblemCode, ProblemText>;

/** Every problem code /v1 answers with, its HTTP status and its human text. */
export const problemCatalogue = Object.fromEntries(problemCodes.map((code) => [code, { status: problemStatuses[code], ...problemTexts[code] }])) as {
  readonly [Code in ProblemCode]: ProblemDefinition;
};

/**
 * Details that differ on the assistant endpoint (`/mcp` and its tools), where the caller is a
 * member's sign-in, not an API key.
 */
export const assistantDetails: Partial<Readonly<Record<ProblemCode, Localized>>> = {
  'common.too_many_requests': {
    en: 'The request budget of this sign-in for the current window is used up; wait Retry-After seconds.',
    es: 'El presupuesto de solicitudes de este inicio de sesión para la ventana actual se ha agotado; espere los segundos indicados en Retry-After.',
    pt: 'O limite de requisições deste login para a janela atual acabou; aguarde os segundos indicados em Retry-After.',
  },
};

/**
 * Why a request was invalid, for a detail that helps the caller fix it. Parameter names are
 * filled in verbatim; they are the API's own names, never the caller's input.
 */
export const invalidRequestDetails = {
  parameter: {
    en: 'The query parameter "{name}" is not valid.',
    es: 'El parámetro de consulta "{name}" no es válido.',
    pt: 'O parâmetro de consulta "{name}" não é válido.',
  },
  repeated: {
    en: 'The query parameter "{name}" was sent more than once.',
    es: 'El parámetro de consulta "{name}" se envió más de una vez.',
    pt: 'O parâmetro de consulta "{name}" foi enviado mais de uma vez.',
  },
  limit: {
    en: 'The query parameter "limit" must be a whole number from 1 to 200, written with digits only.',
    es: 'El parámetro de consulta "limit" debe ser un número entero de 1 a 200, escrito solo con dígitos.',
    pt: 'O parâmetro de consulta "limit" deve ser um número inteiro de 1 a 200, escrito apenas com dígitos.',
  },
  cursor: {
    en: 'The cursor cannot be read. Send the nextCursor of the previous page of this operation exactly as received.',
    es: 'El cursor no se puede leer. Envíe el nextCursor de la página anterior de esta operación exactamente como lo recibió.',
    pt: 'O cursor não pode ser lido. Envie o nextCursor da página anterior desta operação exatamente como recebido.',
  },
  status: {
    en: 'The query parameter "status" must be one of: {allowed}.',
    es: 'El parámetro de consulta "status" debe ser uno de: {allowed}.',
    pt: 'O parâmetro de consulta "status" deve ser um de: {allowed}.',
  },
  metric: {
    en: 'The metric must be one of: {allowed}.',
    es: 'La métrica debe ser una de: {allowed}.',
    pt: 'A métrica deve ser uma de: {allowed}.',
  },
  date: {
    en: 'The query parameter "{name}" must be an ISO 8601 date or date-time: a date such as 2026-10-01 (or the week date 2026-W40-4, the ordinal date 2026-274, or 20261001), optionally with a time of day and Z or an offset, such as 2026-10-01T14:30:00Z or 2026-10-01T14:30:00+02:00 (without Z or an offset the time is UTC).',
    es: 'El parámetro de consulta "{name}" debe ser una fecha o una fecha y hora ISO 8601: una fecha como 2026-10-01 (o la fecha de semana 2026-W40-4, la fecha ordinal 2026-274, o 20261001), con una hora del día opcional y Z o un desfase, como 2026-10-01T14:30:00Z o 2026-10-01T14:30:00+02:00 (sin Z ni desfase la hora es UTC).',
    pt: 'O parâmetro de consulta "{name}" deve ser uma data ou uma data e hora ISO 8601: uma data como 2026-10-01 (ou a data de semana 2026-W40-4, a data ordinal 2026-274, ou 20261001), com uma hora do dia opcional e Z ou um deslocamento, como 2026-10-01T14:30:00Z ou 2026-10-01T14:30:00+02:00 (sem Z nem deslocamento a hora é UTC).',
  },
  date_plus: {
    en: 'The query parameter "{name}" has a space where a date-time has the + of its offset: in a query string an unescaped + reads as a space. Write the + as %2B (for example 2026-10-01T14:30:00%2B02:00), or use Z.',
    es: 'El parámetro de consulta "{name}" tiene un espacio donde una fecha y hora lleva el + de su desfase: en una cadena de consulta un + sin codificar se lee como un espacio. Escriba el + como %2B (por ejemplo 2026-10-01T14:30:00%2B02:00), o use Z.',
    pt: 'O parâmetro de consulta "{name}" tem um espaço onde uma data e hora tem o + do seu deslocamento: numa query string um + não codificado é lido como um espaço. Escreva o + como %2B (por exemplo 2026-10-01T14:30:00%2B02:00), ou use Z.',
  },
  window: {
    en: 'The query parameter "from" must be earlier than "to".',
    es: 'El parámetro de consulta "from" debe ser anterior a "to".',
    pt: 'O parâmetro de consulta "from" deve ser anterior a "to".',
  },
  window_range: {
    en: 'The window from "from" to "to", in whole UTC days, must lie between 0001-01-01T00:00:00Z and 9999-12-31T00:00:00Z.',
    es: 'La ventana de "from" a "to", en días UTC completos, debe estar entre 0001-01-01T00:00:00Z y 9999-12-31T00:00:00Z.',
    pt: 'A janela de "from" a "to", em dias UTC completos, deve estar entre 0001-01-01T00:00:00Z e 9999-12-31T00:00:00Z.',
  },
  window_length: {
    en: 'The window from "from" to "to" must be at most 366 days.',
    es: 'La ventana de "from" a "to" debe ser de 366 días como máximo.',
    pt: 'A janela de "from" a "to" deve ter no máximo 366 dias.',
  },
  granularity: {
    en: 'The query parameter "granularity" must be day or week.',
    es: 'El parámetro de consulta "granularity" debe ser day o week.',
    pt: 'O parâmetro de consulta "granularity" deve ser day ou week.',
  },
  period: {
    en: 'The period must be daily or weekly.',
    es: 'El período debe ser daily o weekly.',
    pt: 'O período deve ser daily ou weekly.',
  },
  http: {
    en: 'The request is not valid HTTP.',
    es: 'La solicitud no es HTTP válido.',
    pt: 'A requisição não é HTTP válido.',
  },
  body_fields: {
    en: 'The request body must be a JSON object whose only field is "period" (daily or weekly).',
    es: 'El cuerpo de la solicitud debe ser un objeto JSON cuyo único campo es "period" (daily o weekly).',
    pt: 'O corpo da requisição deve ser um objeto JSON cujo único campo é "period" (daily ou weekly).',
  },
  body: {
    en: 'The request body is not valid JSON.',
    es: 'El cuerpo de la solicitud no es JSON válido.',
    pt: 'O corpo da requisição não é um JSON válido.',
  },
  parameters: {
    en: 'The query string has more than 1000 parameters; none of them was read.',
    es: 'La cadena de consulta tiene más de 1000 parámetros; no se leyó ninguno.',
    pt: 'A string de consulta tem mais de 1000 parâmetros; nenhum foi lido.',
  },
} as const satisfies Record<InvalidRequestCause, Localized>;
