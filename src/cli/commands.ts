import type { Command } from './command.js';

/** Each command's module is loaded only when it runs, so that the command line starts quickly. */
export const commands: Readonly<Record<string, () => Promise<Command>>> = {
  serve: async () => (await import('./commands/serveCommand.js')).serveCommand,
  migrate: async () => (await import('./commands/migrateCommand.js')).migrateCommand,
  seed: async () => (await import('./commands/seedCommand.js')).seedCommand,
  keys: async () => (await import('./commands/keysCommand.js')).keysCommand,
  console: async () => (await import('./commands/consoleCommand.js')).consoleCommand,
  projections: async () => (await import('./commands/projectionsCommand.js')).projectionsCommand,
  openapi: async () => (await import('./commands/openapiCommand.js')).openapiCommand,
  evidence: async () => (await import('./commands/evidenceCommand.js')).evidenceCommand,
};
