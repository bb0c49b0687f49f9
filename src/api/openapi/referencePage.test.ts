import { describe, expect, test } from 'vitest';
import { v1Operations } from '../v1/operations.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openApiDocument.js';
import { inlineMarkdown, markdown, renderReferencePage } from './referencePage.js';

const document = buildOpenApiDocument(v1Operations, { serverUrl: 'https://api.test.example', errorTypeBase: 'https://problems.test.example/v1' });

describe('the reference page', () => {
  const page = renderReferencePage(document);

  test('shows every operation: its id, method and path, summary and scope', () => {
    for (const operation of v1Operations) {
      expect(page).toContain(`id="op-${operation.operationId}"`);
      expect(page).toContain(`<code>${operation.operationId}</code>`);
      expect(page).toContain(`<span class="m ${operation.method}">${operation.method.toUpperCase()}</span> <code class="path">${operation.path}</code>`);
      expect(page).toContain(operation.summary.replace(/'/g, '&#39;'));
      expect(page).toContain(operation.scope === null ? 'Requires: any valid key' : `Requires: scope <code>${operation.scope}</code>`);
    }
  });

  test('shows every path of the document and every component schema with its properties', () => {
    for (const path of Object.keys(document.paths ?? {})) expect(page).toContain(path);
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
      expect(page).toContain(`<article id="schema-${name}"><h3>${name}</h3>`);
      for (const property of Object.keys((schema as { properties?: object }).properties ?? {})) expect(page).toContain(`<code>${property}</code>`);
    }
  });

  test('shows parameters with their bounds and enum values, and responses with their content', () => {
    expect(page).toContain('<code>limit</code></td><td>query</td><td>no</td><td><span class="type">integer</span> <span class="meta">(format int32; 1 to 200; default <code>50</code>)</span>');
    expect(page).toContain('<code>pending_approval</code>');
    expect(page).toContain('<td class="status s4">404</td>');
    expect(page).toContain('<code>application/problem+json</code><br><a href="#schema-Problem">Problem</a>');
  });

  test('is self-contained: no script, no external resource', () => {
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|url\(|@import/i);
    expect(page).not.toMatch(/href="(?!#|\/openapi\.json")/);
  });

  test('escapes every text taken from the document', () => {
    const hostile = structuredClone(document) as OpenApiDocument & { paths: Record<string, Record<string, { description?: string; summary?: string }>> };
    const evil = '<script>alert("x")</script>';
    hostile.info.title = evil;
    hostile.info.description = `Intro ${evil}\n\n- item ${evil}`;
    const operation = hostile.paths['/v1/orders']?.get;
    if (operation === undefined) throw new Error('the document has GET /v1/orders');
    operation.description = `A description containing ${evil} and \`${evil}\`.`;
    operation.summary = `**${evil}**`;
    const schemas = hostile.components?.schemas as Record<string, { description?: string }>;
    const order = schemas.Order;
    if (order === undefined) throw new Error('the document has the Order schema');
    order.description = evil;
    const rendered = renderReferencePage(hostile);
    expect(rendered).not.toContain('<script');
    expect(rendered).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;');
    expect(rendered).toContain('<code>&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;</code>');
    expect(rendered).toContain('<strong>&#60;script&#62;');
  });
});

describe('the Markdown subset', () => {
  test('paragraphs, bullet lists with continuation lines, bold and code', () => {
    expect(markdown('First line\nsame paragraph.\n\n- **one** `a<b`\n  continued\n- two\n\nLast.')).toBe(
      '<p>First line same paragraph.</p><ul><li><strong>one</strong> <code>a&#60;b</code> continued</li><li>two</li></ul><p>Last.</p>',
    );
  });

  test('an unmatched backtick or asterisks stay text', () => {
    expect(inlineMarkdown('a ` b ** c')).toBe('a ` b ** c');
    expect(inlineMarkdown('<b>&</b>')).toBe('&#60;b&#62;&#38;&#60;/b&#62;');
  });
});
