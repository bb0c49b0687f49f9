#!/usr/bin/env node
// Runs the compiled JavaScript of dist/ when it was built from the sources as they are (`npm run
// build`, run by `npm install` and `npm start`); otherwise the TypeScript sources through tsx's
// loader, so that `npx supply-api` works right after a clone and after any edit. A replay runs in a
// child process with a young generation sized for it (replayHeap.js).
import { compiledEntry } from './compiled.js';
import { followParent, relaunch, replayRelaunchArgs } from './replayHeap.js';

const relaunchArgs = replayRelaunchArgs(process.argv, process.execArgv, process.env);
if (relaunchArgs !== undefined) {
  relaunch(relaunchArgs);
} else {
  followParent(process.env);
  const compiled = compiledEntry('src/cli/main.js');
  if (compiled === undefined) {
    const { register } = await import('tsx/esm/api');
    register();
    await import('../src/cli/main.ts');
  } else {
    await import(compiled);
  }
}
