// Which sources dist/ was compiled from, so that the command line runs compiled JavaScript only
// when it matches the sources as they are now (any edit, checkout or new file makes it stale).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

export const root = join(import.meta.dirname, '..');
export const distDir = join(root, 'dist');
/** The folders compiled (tests are not: they run from the sources under vitest). */
export const sourceDirs = ['src', 'projections'];
export const manifestFile = join(distDir, 'sources.txt');

/** Every compiled source file, relative to the package root. */
export function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) files.push(relative(root, path));
    }
  };
  for (const dir of sourceDirs) walk(join(root, dir));
  return files.sort();
}

/** One line per source file: path, size and modification time. */
export function sourceManifest(files = sourceFiles()) {
  return files
    .map((file) => {
      const stat = statSync(join(root, file));
      return `${file} ${stat.size} ${stat.mtimeMs}\n`;
    })
    .join('');
}

/** The URL of the compiled `entry` (e.g. `src/cli/main.js`), or undefined when dist/ is absent or stale. */
export function compiledEntry(entry, dist = distDir) {
  let built;
  try {
    built = readFileSync(join(dist, 'sources.txt'), 'utf8');
  } catch {
    return undefined;
  }
  return built === sourceManifest() ? pathToFileURL(join(dist, entry)).href : undefined;
}
