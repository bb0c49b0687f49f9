import type { OpenApiDocument } from './openApiDocument.js';

/**
 * The reference page of `GET /docs`: the OpenAPI document as one self-contained HTML page (inline
 * CSS only, no script, no external resource), rendered once at start-up. Every text taken from the
 * document is HTML-escaped; descriptions go through a small Markdown subset (paragraphs, `-`
 * bullet lists, `**bold**`, `` `code` ``).
 */
export function renderReferencePage(document: OpenApiDocument): string {
  const doc = document as unknown as Json;
  const info = record(doc.info);
  const title = text(info.title) || 'API reference';
  const operations = operationsOf(doc);
  const tags = tagsOf(doc, operations);
  const schemas = Object.entries(record(record(doc.components).schemas));
  const body = [
    `<header><h1>${escapeHtml(title)}</h1>`,
    `<p class="meta">Contract revision <code>${escapeHtml(text(info.version))}</code> · OpenAPI <code>${escapeHtml(text(doc.openapi))}</code> · machine-readable: <a href="/openapi.json"><code>/openapi.json</code></a></p></header>`,
    navigation(tags, schemas),
    '<main>',
    `<section id="overview"><h2>Overview</h2>${markdown(text(info.description))}${contact(info)}${servers(doc)}${securitySchemes(doc)}</section>`,
    ...tags.map((tag) => tagSection(tag, doc)),
    schemas.length === 0 ? '' : `<section id="schemas"><h2>Schemas</h2>${schemas.map(([name, schema]) => schemaSection(name, record(schema))).join('')}</section>`,
    responseHeadersSection(operations),
    '</main>',
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} reference</title>
<style>${styles}</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}

type Json = { readonly [key: string]: unknown };

type OperationEntry = { readonly path: string; readonly method: string; readonly operation: Json };

type Tag = { readonly name: string; readonly description: string; readonly operations: readonly OperationEntry[] };

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

/** Escapes text for HTML content and (quoted) attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An element id from document text: only letters, digits, `-` and `_` survive. */
function anchor(prefix: string, name: string): string {
  return `${prefix}-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** Inline Markdown: `` `code` `` and `**bold**`; everything else escaped. */
export function inlineMarkdown(source: string): string {
  return source
    .split('`')
    .map((part, index, parts) => {
      // An odd number of backticks leaves the last part as plain text.
      if (index % 2 === 1 && index < parts.length - 1) return `<code>${escapeHtml(part)}</code>`;
      const plain = index % 2 === 1 ? `\`${part}` : part;
      return escapeHtml(plain).replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>');
    })
    .join('');
}

/** Block Markdown: paragraphs separated by blank lines, and `-` bullet lists (continuation lines join the item). */
export function markdown(source: string): string {
  const html: string[] = [];
  for (const block of source.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    let paragraph: string[] = [];
    let items: string[] = [];
    const flushParagraph = () => {
      if (paragraph.length > 0) html.push(`<p>${inlineMarkdown(paragraph.join(' '))}</p>`);
      paragraph = [];
    };
    const flushList = () => {
      if (items.length > 0) html.push(`<ul>${items.map((item) => `<li>${inlineMarkdown(item)}</li>`).join('')}</ul>`);
      items = [];
    };
    for (const line of lines) {
      const bullet = /^\s*[-*] +(.*)$/.exec(line);
      if (bullet) {
        flushParagraph();
        items.push(bullet[1] ?? '');
      } else if (items.length > 0 && /^\s+\S/.test(line)) {
        items[items.length - 1] += ` ${line.trim()}`;
      } else {
        flushList();
        paragraph.push(line.trim());
      }
    }
    flushParagraph();
    flushList();
  }
  return html.join('');
}

function operationsOf(doc: Json): OperationEntry[] {
  return Object.entries(record(doc.paths)).flatMap(([path, item]) =>
    methods.filter((method) => record(item)[method] !== undefined).map((method) => ({ path, method, operation: record(record(item)[method]) })),
  );
}

function tagsOf(doc: Json, operations: readonly OperationEntry[]): Tag[] {
  const declared = list(doc.tags).map((tag) => ({ name: text(record(tag).name), description: text(record(tag).description) }));
  const names = [...new Set([...declared.map((tag) => tag.name), ...operations.flatMap(({ operation }) => tagNamesOf(operation))])];
  return names.map((name) => ({
    name,
    description: declared.find((tag) => tag.name === name)?.description ?? '',
    operations: operations.filter(({ operation }) => tagNamesOf(operation).includes(name)),
  }));
}

function tagNamesOf(operation: Json): string[] {
  const names = list(operation.tags).map(text).filter((name) => name !== '');
  return names.length === 0 ? ['Other'] : names;
}

function navigation(tags: readonly Tag[], schemas: readonly (readonly [string, unknown])[]): string {
  const tagItems = tags.map(
    (tag) =>
      `<li><a href="#${anchor('tag', tag.name)}">${escapeHtml(tag.name)}</a><ul>${tag.operations
        .map(({ path, method, operation }) => `<li><a href="#${operationAnchor(operation, method, path)}"><span class="m ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> ${escapeHtml(path)}</a></li>`)
        .join('')}</ul></li>`,
  );
  const schemaItems = schemas.length === 0 ? '' : `<li><a href="#schemas">Schemas</a><ul>${schemas.map(([name]) => `<li><a href="#${anchor('schema', name)}">${escapeHtml(name)}</a></li>`).join('')}</ul></li>`;
  return `<nav><h2>Contents</h2><ul><li><a href="#overview">Overview</a></li>${tagItems.join('')}${schemaItems}<li><a href="#headers">Response headers</a></li></ul></nav>`;
}

function operationAnchor(operation: Json, method: string, path: string): string {
  const id = text(operation.operationId);
  return anchor('op', id === '' ? `${method}_${path}` : id);
}

function contact(info: Json): string {
  const person = record(info.contact);
  const parts = [
    text(person.name) === '' ? '' : `Contact: ${escapeHtml(text(person.name))}${text(person.email) === '' ? '' : ` &lt;${escapeHtml(text(person.email))}&gt;`}`,
    text(record(info.license).name) === '' ? '' : `Licence: ${escapeHtml(text(record(info.license).name))}`,
  ].filter((part) => part !== '');
  return parts.length === 0 ? '' : `<p class="meta">${parts.join(' · ')}</p>`;
}

function servers(doc: Json): string {
  const rows = list(doc.servers).map((server) => {
    const s = record(server);
    return `<li><code>${escapeHtml(text(s.url))}</code>${text(s.description) === '' ? '' : ` — ${inlineMarkdown(text(s.description))}`}</li>`;
  });
  return rows.length === 0 ? '' : `<h3>Servers</h3><ul>${rows.join('')}</ul>`;
}

function securitySchemes(doc: Json): string {
  const schemes = Object.entries(record(record(doc.components).securitySchemes)).map(([name, scheme]) => {
    const s = record(scheme);
    const kind = [text(s.type), text(s.scheme), text(s.in) === '' ? '' : `in ${text(s.in)}`, text(s.name)].filter((part) => part !== '').join(' ');
    const format = text(s.bearerFormat) === '' ? '' : `<p class="meta">Format: <code>${escapeHtml(text(s.bearerFormat))}</code></p>`;
    return `<dt><code>${escapeHtml(name)}</code> <span class="meta">${escapeHtml(kind)}</span></dt><dd>${format}${markdown(text(s.description))}</dd>`;
  });
  return schemes.length === 0 ? '' : `<h3>Authentication</h3><dl>${schemes.join('')}</dl>`;
}

function tagSection(tag: Tag, doc: Json): string {
  return `<section id="${anchor('tag', tag.name)}"><h2>${escapeHtml(tag.name)}</h2>${markdown(tag.description)}${tag.operations.map((entry) => operationArticle(entry, doc)).join('')}</section>`;
}

/**
 * What the operation needs: the scope in `x-required-scope` (any valid key without it), under the
 * security schemes of its requirements (the document's when it has none of its own).
 */
function requiredScopes(operation: Json, doc: Json): string {
  const requirements = list(operation.security ?? doc.security).map(record);
  if (requirements.length === 0) return 'no authentication';
  const scope = text(operation['x-required-scope']);
  const alternatives = requirements.map((requirement) =>
    Object.entries(requirement)
      .map(([scheme, roles]) => {
        const named = [...(scope === '' ? [] : [scope]), ...list(roles).map(text)];
        const needs = named.length === 0 ? 'any valid key' : `scope ${named.map((name) => `<code>${escapeHtml(name)}</code>`).join(' and ')}`;
        return `${needs} (<code>${escapeHtml(scheme)}</code>)`;
      })
      .join(' and '),
  );
  return alternatives.join(' or ');
}

function operationArticle({ path, method, operation }: OperationEntry, doc: Json): string {
  const parameters = list(operation.parameters).map((parameter) => resolve(doc, parameter));
  const operationId = text(operation.operationId);
  const requestBody = record(resolve(doc, operation.requestBody));
  return [
    `<article id="${operationAnchor(operation, method, path)}">`,
    `<h3><span class="m ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code class="path">${escapeHtml(path)}</code></h3>`,
    `<p class="summary">${inlineMarkdown(text(operation.summary))}</p>`,
    `<p class="meta">${operationId === '' ? '' : `Operation <code>${escapeHtml(operationId)}</code> · `}Requires: ${requiredScopes(operation, doc)}</p>`,
    markdown(text(operation.description)),
    parameters.length === 0 ? '' : `<h4>Parameters</h4>${parametersTable(parameters)}`,
    Object.keys(requestBody).length === 0 ? '' : `<h4>Request body</h4>${requestBodyBlock(requestBody)}`,
    `<h4>Responses</h4>${responsesTable(record(operation.responses), doc)}`,
    '</article>',
  ].join('');
}

function parametersTable(parameters: readonly Json[]): string {
  const rows = parameters.map((parameter) => {
    const schema = record(parameter.schema);
    const description = text(parameter.description) || text(schema.description);
    return `<tr><td><code>${escapeHtml(text(parameter.name))}</code></td><td>${escapeHtml(text(parameter.in))}</td><td>${parameter.required === true ? 'yes' : 'no'}</td><td>${schemaSummary(schema)}</td><td>${inlineMarkdown(description)}</td></tr>`;
  });
  return `<table><thead><tr><th>Name</th><th>In</th><th>Required</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function requestBodyBlock(body: Json): string {
  const content = Object.entries(record(body.content));
  return `${markdown(text(body.description))}<p class="meta">${body.required === true ? 'Required' : 'Optional'}; ${content.map(([type]) => `<code>${escapeHtml(type)}</code>`).join(', ')}</p>${content.map(([, media]) => shapeOf(record(record(media).schema))).join('')}`;
}

function responsesTable(responses: Json, doc: Json): string {
  const rows = Object.entries(responses).map(([status, raw]) => {
    const response = resolve(doc, raw);
    const content = Object.entries(record(response.content));
    const contentCell = content.length === 0 ? '<span class="meta">no body</span>' : content.map(([type, media]) => `<code>${escapeHtml(type)}</code><br>${shapeOf(record(record(media).schema))}`).join('<br>');
    const headers = Object.keys(record(response.headers));
    const headerCell = headers.length === 0 ? '' : `<div class="meta">Headers: ${headers.map((name) => `<a href="#${anchor('header', name)}"><code>${escapeHtml(name)}</code></a>`).join(', ')}</div>`;
    return `<tr><td class="status s${escapeHtml(status.charAt(0))}">${escapeHtml(status)}</td><td>${inlineMarkdown(text(response.description))}${headerCell}</td><td>${contentCell}</td></tr>`;
  });
  return `<table><thead><tr><th>Status</th><th>Description</th><th>Content</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** A `#/components/…` reference resolved within the document; anything else as it is. */
function resolve(doc: Json, value: unknown): Json {
  const ref = text(record(value).$ref);
  if (!ref.startsWith('#/')) return record(value);
  let target: unknown = doc;
  for (const part of ref.slice(2).split('/')) target = record(target)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return record(target);
}

function refName(schema: Json): string | undefined {
  const ref = text(schema.$ref);
  return ref.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : undefined;
}

/** A response or request schema: a link to a named schema, or the inline shape as a property table. */
function shapeOf(schema: Json): string {
  const name = refName(schema);
  if (name !== undefined) return `<a href="#${anchor('schema', name)}">${escapeHtml(name)}</a>`;
  if (Object.keys(record(schema.properties)).length > 0) return `<span class="meta">object</span>${propertiesTable(schema)}`;
  return schemaSummary(schema);
}

/** One line: type (or link), enum values, format and bounds. */
function schemaSummary(schema: Json): string {
  const name = refName(schema);
  if (name !== undefined) return `<a href="#${anchor('schema', name)}">${escapeHtml(name)}</a>`;
  for (const combinator of ['oneOf', 'anyOf', 'allOf'] as const) {
    const parts = list(schema[combinator]).map((part) => schemaSummary(record(part)));
    if (parts.length > 0) return parts.join(combinator === 'allOf' ? ' and ' : ' or ');
  }
  const types = Array.isArray(schema.type) ? schema.type.map(text) : [text(schema.type)].filter((type) => type !== '');
  const type = types.length === 0 ? 'any' : types.map((t) => (t === 'array' ? `array of ${schemaSummary(record(schema.items))}` : escapeHtml(t))).join(' | ');
  const details: string[] = [];
  if (schema.const !== undefined) details.push(`always <code>${escapeHtml(JSON.stringify(schema.const))}</code>`);
  const values = list(schema.enum);
  if (values.length > 0) details.push(`one of ${values.map((value) => `<code>${escapeHtml(typeof value === 'string' ? value : JSON.stringify(value))}</code>`).join(', ')}`);
  if (text(schema.format) !== '') details.push(`format ${escapeHtml(text(schema.format))}`);
  details.push(...bounds(schema));
  if (schema.default !== undefined) details.push(`default <code>${escapeHtml(JSON.stringify(schema.default))}</code>`);
  if (text(schema.pattern) !== '') details.push(`pattern <code>${escapeHtml(text(schema.pattern))}</code>`);
  return `<span class="type">${type}</span>${details.length === 0 ? '' : ` <span class="meta">(${details.join('; ')})</span>`}`;
}

function bounds(schema: Json): string[] {
  const range = (low: unknown, high: unknown, unit: string): string | undefined => {
    const lo = typeof low === 'number' ? low : undefined;
    const hi = typeof high === 'number' ? high : undefined;
    if (lo === undefined && hi === undefined) return undefined;
    if (lo !== undefined && hi !== undefined) return lo === hi ? `exactly ${lo}${unit}` : `${lo} to ${hi}${unit}`;
    return lo !== undefined ? `at least ${lo}${unit}` : `at most ${String(hi)}${unit}`;
  };
  return [
    range(schema.minimum, schema.maximum, ''),
    typeof schema.exclusiveMinimum === 'number' ? `more than ${schema.exclusiveMinimum}` : undefined,
    typeof schema.exclusiveMaximum === 'number' ? `less than ${schema.exclusiveMaximum}` : undefined,
    range(schema.minLength, schema.maxLength, ' characters'),
    range(schema.minItems, schema.maxItems, ' items'),
    schema.uniqueItems === true ? 'unique items' : undefined,
  ]
    .filter((part): part is string => part !== undefined)
    .map(escapeHtml);
}

/** Properties of an object schema, nested objects flattened as `parent.child` and `list[].child`. */
function propertiesTable(schema: Json): string {
  const rows: string[] = [];
  const visit = (object: Json, prefix: string, depth: number) => {
    const required = list(object.required).map(text);
    for (const [name, raw] of Object.entries(record(object.properties))) {
      const property = record(raw);
      const fullName = `${prefix}${name}`;
      rows.push(
        `<tr><td><code>${escapeHtml(fullName)}</code></td><td>${schemaSummary(property)}</td><td>${required.includes(name) ? 'yes' : 'no'}</td><td>${inlineMarkdown(text(property.description))}</td></tr>`,
      );
      if (depth >= 6) continue;
      if (Object.keys(record(property.properties)).length > 0) visit(property, `${fullName}.`, depth + 1);
      const items = record(property.items);
      if (refName(items) === undefined && Object.keys(record(items.properties)).length > 0) visit(items, `${fullName}[].`, depth + 1);
    }
  };
  visit(schema, '', 0);
  const closed = schema.additionalProperties === false ? '<p class="meta">No other properties.</p>' : '';
  return `<table class="props"><thead><tr><th>Property</th><th>Type</th><th>Required</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>${closed}`;
}

function schemaSection(name: string, schema: Json): string {
  const body = Object.keys(record(schema.properties)).length > 0 ? propertiesTable(schema) : `<p>${schemaSummary(schema)}</p>`;
  return `<article id="${anchor('schema', name)}"><h3>${escapeHtml(name)}</h3>${markdown(text(schema.description))}${body}</article>`;
}

/** Every response header the document names, once, with its description and schema. */
function responseHeadersSection(operations: readonly OperationEntry[]): string {
  const headers = new Map<string, Json>();
  for (const { operation } of operations) {
    for (const response of Object.values(record(operation.responses))) {
      for (const [name, header] of Object.entries(record(record(response).headers))) if (!headers.has(name)) headers.set(name, record(header));
    }
  }
  const rows = [...headers].map(
    ([name, header]) =>
      `<tr id="${anchor('header', name)}"><td><code>${escapeHtml(name)}</code></td><td>${schemaSummary(record(header.schema))}</td><td>${inlineMarkdown(text(header.description))}</td></tr>`,
  );
  return `<section id="headers"><h2>Response headers</h2><table><thead><tr><th>Header</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

const styles = `
:root{color-scheme:light dark;--fg:#1d232b;--muted:#5d6875;--bg:#fff;--panel:#f5f7f9;--line:#dde2e7;--accent:#0b5cad}
@media (prefers-color-scheme:dark){:root{--fg:#e4e8ec;--muted:#9aa5b1;--bg:#14181d;--panel:#1c2228;--line:#2e363f;--accent:#7ab4f5}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);display:grid;grid-template-columns:minmax(200px,270px) minmax(0,1fr);grid-template-areas:"head head" "nav main"}
header{grid-area:head;padding:16px 24px;border-bottom:1px solid var(--line)}
header h1{margin:0;font-size:1.5em}
nav{grid-area:nav;padding:12px 16px;border-right:1px solid var(--line);font-size:13px;position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto}
nav h2{font-size:1em;margin:0 0 8px}
nav ul{list-style:none;margin:0;padding:0}
nav ul ul{padding-left:8px;margin-bottom:8px}
nav a{color:inherit;text-decoration:none;display:block;padding:1px 0;overflow-wrap:anywhere}
nav a:hover{color:var(--accent)}
main{grid-area:main;padding:8px 24px 48px;min-width:0;max-width:1100px}
h2{border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:32px}
h3{margin:24px 0 4px;font-size:1.1em}
h4{margin:12px 0 4px;font-size:.95em}
article{border:1px solid var(--line);border-radius:6px;padding:4px 16px 12px;margin:16px 0;background:var(--panel)}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.path{font-size:15px}
.meta{color:var(--muted);font-size:13px}
.summary{margin:2px 0;font-weight:600}
.m{display:inline-block;min-width:3.6em;text-align:center;border-radius:4px;padding:0 4px;font:700 12px/1.6 ui-monospace,monospace;color:#fff;background:#5d6875}
.m.get{background:#1f7a4d}.m.post{background:#0b5cad}.m.put,.m.patch{background:#9a6700}.m.delete{background:#b42318}
table{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px;background:var(--bg)}
th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:var(--panel)}
td.status{font-weight:700;white-space:nowrap}
td.s2{color:#1f7a4d}td.s4{color:#9a6700}td.s5{color:#b42318}
table.props{margin-top:4px}
a{color:var(--accent)}
ul{padding-left:20px}
p{margin:6px 0}
@media (max-width:800px){body{grid-template-columns:1fr;grid-template-areas:"head" "main"}nav{display:none}}
`;
