#!/usr/bin/env node
// Runs one TypeScript entry file (benchmarks, helper scripts) through tsx's loader.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  process.stderr.write('usage: run-ts.js FILE.ts [args...]\n');
  process.exit(2);
}
process.argv = [process.argv[0] ?? 'node', resolve(entry), ...rest];
register();
await import(pathToFileURL(resolve(entry)).href);
