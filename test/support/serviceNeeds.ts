import { readFileSync } from 'node:fs';
import path from 'node:path';

/** `postgresServer`: Postgres's server binaries, for a cluster of the file's own (ownCluster.ts). */
export type Service = 'postgres' | 'redis' | 'postgresServer';

/** What in a file's text says it uses a real service (directly). */
const markers: Record<Service, RegExp> = {
  postgres: /\b(createPostgresTestDatabase|testPostgresAdminUrl|services\.postgres)\b/,
  redis: /\b(testRedisUrl|services\.redis)\b/,
  postgresServer: /\bownCluster: true\b/,
};

/** Set-up modules that define the services' names and helpers rather than use them: what counts is whether the importing file calls them. */
const definitions = new Set(['databases.ts', 'services.ts', 'serviceNeeds.ts']);

/** Where `file` imports from, resolved to files (`./x.js` → `./x.ts`, relative imports only). */
function importsOf(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const target = path.resolve(path.dirname(file), match[1] ?? '').replace(/\.js$/, '.ts');
    found.push(target);
  }
  return found;
}

/**
 * The real services a test file needs: those its text names, and those of the shared set-up
 * (`test/support/`) it imports, followed through the set-up's own imports. A file that only
 * reads the set-up's names without calling it may be counted too: it is then skipped with the
 * rest when the service is missing, never run without it.
 */
export function servicesNeededBy(file: string, supportDir: string): Set<Service> {
  const needs = new Set<Service>();
  const seen = new Set<string>();
  const visit = (current: string): void => {
    if (seen.has(current)) return;
    seen.add(current);
    let text: string;
    try {
      text = readFileSync(current, 'utf8');
    } catch {
      return;
    }
    for (const service of Object.keys(markers) as Service[]) {
      if (markers[service].test(text)) needs.add(service);
    }
    for (const target of importsOf(current, text)) {
      if (target.startsWith(supportDir + path.sep) && !definitions.has(path.basename(target))) visit(target);
    }
  };
  visit(path.resolve(file));
  return needs;
}
