// Removes the previous build, so that a file deleted from src/ does not linger in the package.
import { rmSync } from 'node:fs';
import { URL } from 'node:url';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
