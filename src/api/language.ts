import type { Request } from 'express';

export const languages = ['en', 'es', 'pt'] as const;
export type Language = (typeof languages)[number];

/**
 * The language of human text (problem title and detail, briefing labels) from Accept-Language,
 * honouring quality values and regional tags (`pt-BR` is `pt`); anything else is English.
 */
export function negotiateLanguage(request: Request): Language {
  if (request.headers['accept-language'] === undefined) return 'en';
  const chosen = request.acceptsLanguages([...languages]);
  return typeof chosen === 'string' && (languages as readonly string[]).includes(chosen) ? (chosen as Language) : 'en';
}
