import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The executable `name` as the shell would find it on PATH, or undefined when no folder of PATH has it. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
