// dist/cjs holds the CommonJS build (tsconfig.cjs.json): its own package.json makes Node and
// TypeScript read its .js and .d.ts files as CommonJS inside this "type": "module" package.
import { writeFileSync } from 'node:fs';
import { URL } from 'node:url';

writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
