import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMENT_HEADER } from 'openapi-typescript';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';

/**
 * The floors of the code base, lowest first, declared here only (docs/development.md, "Layout and floors", says
 * why each sits where it does). A file may import from its own floor and the floors below it,
 * never from a floor above. Folders are matched by their path from the repository root.
 */
const floors: readonly { readonly name: string; readonly folders: readonly string[] }[] = [
  { name: 'config', folders: ['src/config'] },
  { name: 'platform', folders: ['src/platform'] },
  { name: 'events', folders: ['src/events'] },
  { name: 'analytics vocabulary', folders: ['src/analytics'] },
  { name: 'event store', folders: ['src/eventStore'] },
  { name: 'console', folders: ['src/console'] },
  { name: 'projecting', folders: ['src/projecting'] },
  { name: 'projections', folders: ['projections'] },
  { name: 'keys', folders: ['src/keys'] },
  { name: 'reporting', folders: ['src/reporting'] },
  { name: 'exports', folders: ['src/exports'] },
  { name: 'api', folders: ['src/api'] },
  { name: 'mcp', folders: ['src/mcp'] },
  { name: 'main', folders: ['src/main'] },
  { name: 'cli', folders: ['src/cli'] },
  { name: 'harness', folders: ['test', 'drill', 'examples', 'clients', 'vitest.config.ts'] },
];

/** Benchmarks measure everything from outside: not scanned, and nothing may import them. */
const unscanned = 'bench';
/** Shared test set-up: a test on any floor may use it (it builds databases, apps and beds for tests). */
const testSupport = 'test/support/';
/** The published client package: a separate program, it imports nothing of the server. */
const clientPackage = 'clients/typescript/src/';

const maxLines = 500;
/** Files whose length is the rule's business: code, not documentation or lockfiles. */
const codeFile = /\.(ts|mts|cts|js|mjs|cjs|sql)$/;
/**
 * Generated files are exempt from the length rule when they start with their generator's marker:
 * openapi-typescript writes COMMENT_HEADER at the top of clients/typescript/src/schema.ts.
 */
const generatedMarkers = [COMMENT_HEADER];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const skippedFolders = new Set(['node_modules', '.git', 'dist', '.data', 'coverage']);

function filesUnder(folder: string): string[] {
  return readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = folder === '' ? entry.name : `${folder}/${entry.name}`;
    if (entry.isDirectory()) return skippedFolders.has(entry.name) ? [] : filesUnder(relative);
    return entry.isFile() ? [relative] : [];
  });
}

const within = (file: string, folder: string) => file === folder || file.startsWith(`${folder}/`);
const isTest = (file: string) => /\.test\.ts$/.test(file);

function floorOf(file: string): number | undefined {
  const index = floors.findIndex((floor) => floor.folders.some((folder) => within(file, folder)));
  return index === -1 ? undefined : index;
}

/** Every relative module a file names: static imports, `export … from`, `import type`, dynamic `import()`. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path.join(root, file), 'utf8'), true, true);
  return importedFiles
    .map((reference) => reference.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, '.ts'));
}

const allFiles = filesUnder('');
const scanned = allFiles.filter((file) => !within(file, unscanned));
const typeScript = scanned.filter((file) => /\.ts$/.test(file));

describe('floors', () => {
  test('every TypeScript file outside bench/ sits on a floor', () => {
    expect(typeScript.filter((file) => floorOf(file) === undefined)).toEqual([]);
  });

  test('no file imports from a floor above its own (tests included; test/support is open to every test)', () => {
    const upward: string[] = [];
    for (const file of typeScript) {
      const from = floorOf(file);
      if (from === undefined) continue;
      for (const target of importsOf(file)) {
        if (isTest(file) && target.startsWith(testSupport)) continue;
        if (within(target, unscanned)) {
          upward.push(`${file} imports ${target} (bench/ is not a dependency)`);
          continue;
        }
        const to = floorOf(target);
        if (to !== undefined && to > from) upward.push(`${file} (${floors[from]?.name}) imports ${target} (${floors[to]?.name})`);
      }
    }
    expect(upward).toEqual([]);
  });

  test('the client package imports nothing outside itself', () => {
    const outside = typeScript
      .filter((file) => file.startsWith(clientPackage))
      .flatMap((file) => importsOf(file).filter((target) => !target.startsWith(clientPackage)).map((target) => `${file} imports ${target}`));
    expect(outside).toEqual([]);
  });
});

test(`no code file outside bench/ is longer than ${maxLines} lines, generated files excepted`, () => {
  const long = scanned
    .filter((file) => codeFile.test(file))
    .map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }))
    .filter(({ text }) => !generatedMarkers.some((marker) => text.startsWith(marker)))
    .map(({ file, text }) => ({ file, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) }))
    .filter(({ lines }) => lines > maxLines)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
  expect(long).toEqual([]);
});
