import type { OpenApiDocument } from './openApiDocument.js';

/** A readable, self-contained reference page of the document (placeholder until the full page lands). */
export function renderReferencePage(document: OpenApiDocument): string {
  const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item ?? {}).map(([method, operation]) => `<li><code>${escape(method.toUpperCase())} ${escape(path)}</code> ${escape(String((operation as { summary?: string }).summary ?? ''))}</li>`),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(document.info.title)}</title></head><body><h1>${escape(document.info.title)}</h1><ul>${operations.join('')}</ul></body></html>`;
}
