import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/** bin/compiled.js, plain JavaScript run before any TypeScript loader (its shape, as used here). */
type Compiled = {
  compiledEntry(entry: string, dist?: string): string | undefined;
  sourceFiles(): string[];
  sourceManifest(files?: readonly string[]): string;
};
const { compiledEntry, sourceFiles, sourceManifest } = (await import(new URL('../bin/compiled.js', import.meta.url).href)) as Compiled;

describe('which code supply-api runs', () => {
  let dist: string | undefined;
  afterEach(() => {
    if (dist !== undefined) rmSync(dist, { recursive: true, force: true });
    dist = undefined;
  });

  it('compiles the sources of src/ and projections/, not their tests', () => {
    const files = sourceFiles();
    expect(files).toContain(join('src', 'cli', 'main.ts'));
    expect(files).toContain(join('projections', 'index.ts'));
    expect(files.filter((file) => file.endsWith('.test.ts'))).toEqual([]);
    expect(files.filter((file) => !file.startsWith('src') && !file.startsWith('projections'))).toEqual([]);
  });

  it('given a build of the sources as they are, runs it; given a build of other sources, or none, runs the sources', () => {
    dist = mkdtempSync(join(tmpdir(), 'supply-dist-'));
    expect(compiledEntry('src/cli/main.js', dist)).toBeUndefined();

    writeFileSync(join(dist, 'sources.txt'), sourceManifest());
    expect(compiledEntry('src/cli/main.js', dist)).toBe(pathToFileURL(join(dist, 'src/cli/main.js')).href);

    // One file edited since the build (its size or modification time differ).
    const [first, ...rest] = sourceManifest().split('\n');
    writeFileSync(join(dist, 'sources.txt'), [`${first} `, ...rest].join('\n'));
    expect(compiledEntry('src/cli/main.js', dist)).toBeUndefined();

    // A file added since the build.
    writeFileSync(join(dist, 'sources.txt'), sourceManifest(sourceFiles().slice(1)));
    expect(compiledEntry('src/cli/main.js', dist)).toBeUndefined();
  });
});
