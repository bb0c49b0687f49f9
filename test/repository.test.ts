import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { buildOpenApiDocument } from '../src/api/openapi/openApiDocument.js';
import { v1Operations } from '../src/api/v1/operations.js';
import { loadConfig } from '../src/config/config.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const skipped = new Set(['node_modules', 'dist', '.data', '.git']);

function markdownFiles(dir: string = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name)) return [];
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

/** The targets of a Markdown text's links and images, outside code blocks and code spans. */
export function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? '');
  const references = [...prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm)].map((match) => match[1] ?? '');
  return [...inline, ...references];
}

describe('the repository as a reader finds it', () => {
  test('docs/openapi.json is the document the code serves (npm run openapi:write writes it)', () => {
    const config = loadConfig({});
    const current = buildOpenApiDocument(v1Operations, { serverUrl: 'http://localhost:8080', errorTypeBase: config.errorTypeBase });
    const committed: unknown = JSON.parse(readFileSync(path.join(root, 'docs/openapi.json'), 'utf8'));
    expect(committed, 'docs/openapi.json is out of step with the code: run npm run openapi:write').toEqual(JSON.parse(JSON.stringify(current)));
  });

  test('the link reader finds inline, image and reference links and skips code', () => {
    expect(linkTargets('See [a](docs/a.md#x) and ![b](<img/b.png> "t").\n\n```sh\n[c](nowhere.md)\n```\n`[d](nowhere.md)`\n[e]: ../outside.md\n')).toEqual(['docs/a.md#x', 'img/b.png', '../outside.md']);
  });

  test('every relative link of every Markdown file resolves to a file inside the repository', () => {
    const broken: string[] = [];
    const files = markdownFiles();
    expect(files.map((file) => path.relative(root, file))).toContain('README.md');
    for (const file of files) {
      for (const target of linkTargets(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
        const [pathPart = ''] = target.split(/[#?]/);
        const resolved = path.resolve(path.dirname(file), decodeURIComponent(pathPart));
        const inside = resolved === root.replace(/\/$/, '') || resolved.startsWith(root);
        if (!inside || !existsSync(resolved) || !(statSync(resolved).isFile() || statSync(resolved).isDirectory())) broken.push(`${path.relative(root, file)}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('README.md is a guide of at most 400 lines', () => {
    const lines = readFileSync(path.join(root, 'README.md'), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines.length).toBeLessThanOrEqual(400);
  });
});
