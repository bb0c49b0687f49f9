#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx's loader, so `npx supply-api` works right after `npm install`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
