import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { buildOpenApiDocument } from '../src/api/openapi/openApiDocument.js';
import { v1Operations } from '../src/api/v1/operations.js';
import { loadConfig, settingNames } from '../src/config/config.js';

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

/**
 * The cells of a GitHub-flavoured Markdown table row: split at every pipe that no backslash
 * escapes, inside code spans too (GitHub splits there: a pipe in a code span is written `\|`),
 * without the outer pipes.
 */
export function tableCells(row: string): string[] {
  let text = row.trim();
  if (text.startsWith('|')) text = text.slice(1);
  if (text.endsWith('|') && !text.endsWith('\\|')) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/);
}

const delimiterRow = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/**
 * Every row of every table of a Markdown text whose cell count differs from its header's, as
 * `line N: C cells, the header has H` (outside fenced code blocks). A table is a header row, a
 * delimiter row with as many cells, and the lines after them up to a blank one.
 */
export function unevenTableRows(markdown: string): string[] {
  const lines = markdown.split('\n');
  const uneven: string[] = [];
  let fence: string | undefined;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    const fenceMark = /^\s{0,3}(```|~~~)/.exec(line)?.[1];
    if (fenceMark !== undefined && (fence === undefined || fence === fenceMark)) {
      fence = fence === undefined ? fenceMark : undefined;
      continue;
    }
    const next = lines[index + 1];
    if (fence !== undefined || !line.includes('|') || next === undefined || !delimiterRow.test(next)) continue;
    const columns = tableCells(line).length;
    if (tableCells(next).length !== columns) uneven.push(`line ${index + 2}: the delimiter row has ${tableCells(next).length} cells, the header ${columns}`);
    index += 2;
    for (; index < lines.length && (lines[index] ?? '').trim() !== ''; index += 1) {
      const cells = tableCells(lines[index] ?? '').length;
      if (cells !== columns) uneven.push(`line ${index + 1}: ${cells} cells, the header has ${columns}`);
    }
  }
  return uneven;
}

describe('the repository as a reader finds it', () => {
  test('docs/openapi.json is the document the code serves (npm run openapi:write writes it)', () => {
    const config = loadConfig({});
    const current = buildOpenApiDocument(v1Operations, { serverUrl: 'http://localhost:8080', errorTypeBase: config.errorTypeBase });
    const committed: unknown = JSON.parse(readFileSync(path.join(root, 'docs/openapi.json'), 'utf8'));
    expect(committed, 'docs/openapi.json is out of step with the code: run npm run openapi:write').toEqual(JSON.parse(JSON.stringify(current)));
  });

  test('the table reader splits rows at unescaped pipes, code spans included, and finds uneven rows', () => {
    expect(tableCells('| a | `b\\|c` | d \\| e |')).toEqual([' a ', ' `b\\|c` ', ' d \\| e ']);
    expect(tableCells('| a | `b|c` |')).toHaveLength(3);
    const table = '| a | b |\n| - | - |\n| 1 | 2 |\n| 1 | 2 | 3 |\n| 1 |\n\nafter | the table\n\n```\n| x | y |\n| - |\n```\n';
    expect(unevenTableRows(table)).toEqual(['line 4: 3 cells, the header has 2', 'line 5: 1 cells, the header has 2']);
  });

  test('every Markdown table has as many cells in each row as in its header', () => {
    const uneven = markdownFiles().flatMap((file) => unevenTableRows(readFileSync(file, 'utf8')).map((row) => `${path.relative(root, file)} ${row}`));
    expect(uneven).toEqual([]);
  });

  test("README's Settings table names every setting the service reads", () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const settings = readme.slice(readme.indexOf('\n## Settings\n'), readme.indexOf('\n## ', readme.indexOf('\n## Settings\n') + 1));
    const named = new Set(settings.split('\n').filter((line) => line.startsWith('| `')).flatMap((line) => [...(tableCells(line)[0] ?? '').matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1])));
    expect(settingNames.filter((name) => !named.has(name))).toEqual([]);
  });

  test("README's shell steps set each variable before they use it, and give every process of one machine its own port", () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
    const set = new Set<string>();
    const unset: string[] = [];
    for (const line of blocks.join('\n').split('\n')) {
      const code = line.replace(/^\s*#.*$/, '').replace(/\s#\s.*$/, '');
      for (const [, name = ''] of code.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)) if (!set.has(name)) unset.push(`${name}: ${line.trim()}`);
      for (const [, name = ''] of code.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Z_][A-Z0-9_]*)=/g)) set.add(name);
    }
    expect(unset).toEqual([]);
    const served = blocks.flatMap((block) => block.split('\n')).filter((line) => /supply-api serve --roles/.test(line));
    expect(served.length).toBeGreaterThan(1);
    const ports = served.map((line) => /--port (\d+)/.exec(line)?.[1]);
    expect(ports.filter((port) => port === undefined)).toEqual([]);
    expect(new Set(ports).size).toBe(ports.length);
  });

  test("git ignores what the README's steps leave in the repository: seed.json and the client's packed tarball", () => {
    const ignored = execFileSync('git', ['check-ignore', '--no-index', 'seed.json', 'dental-supply-read-api-client-1.0.0.tgz', 'clients/typescript/dental-supply-read-api-client-1.0.0.tgz'], { cwd: root, encoding: 'utf8' });
    expect(ignored.trim().split('\n')).toEqual(['seed.json', 'dental-supply-read-api-client-1.0.0.tgz', 'clients/typescript/dental-supply-read-api-client-1.0.0.tgz']);
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
