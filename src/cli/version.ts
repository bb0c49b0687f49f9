import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's version, read from the nearest package.json above this file (sources or dist/). */
export function packageVersion(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'dental-supply-read-api' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here: look higher.
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
