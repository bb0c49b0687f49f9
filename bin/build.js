#!/usr/bin/env node
// Compiles src/ and projections/ to JavaScript in dist/ (one file per source, no bundling), for
// `supply-api` to run without the TypeScript loader: tsx's loader thread, its transforms and
// source maps held ~30 MB of every process. Run by `npm install` (prepare) and `npm start`.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { distDir, manifestFile, root, sourceFiles, sourceManifest } from './compiled.js';

const files = sourceFiles();
// Read before compiling: a file saved meanwhile leaves the manifest stale, never wrongly current.
const manifest = sourceManifest(files);
rmSync(distDir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: files.map((file) => join(root, file)),
  outdir: distDir,
  outbase: root,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: join(root, 'tsconfig.json'),
  logLevel: 'warning',
});
writeFileSync(manifestFile, manifest);
