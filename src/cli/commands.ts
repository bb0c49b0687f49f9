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

export const usage = `usage: supply-api <command> [options]

  serve [--port N] [--roles api,projector,worker] [--demo]
  migrate
  seed [--tenants N] [--days D] [--seed S] [--scale small|medium|large] [--as-of YYYY-MM-DD]
  keys issue --workspace W --member M --scopes a,b [--name N]
  keys revoke --prefix P
  keys list --workspace W
  console suspend-member|reactivate-member --workspace W --member M
  console suspend-tenant|reactivate-tenant --workspace W
  console advance-order --workspace W --order O
  console place-order --workspace W [--clinic C]
  projections status
  projections wait [--timeout S]
  projections replay [--projection NAME[,NAME]]
  openapi
  evidence verify EVIDENCE_ID

Commands that print data print one JSON document on stdout; logs and progress go to stderr.
Settings come from the environment (DATABASE_URL, EVENTSTORE_URL, DATA_DIR, …; see README.md).
`;
