import { loadConfig, ConfigError } from '../config/config.js';
import { systemClock } from '../platform/clock.js';
import { createLogger } from '../platform/logger.js';
import { UsageError } from './cliError.js';
import { commandHelp, commandTable, isGroup, topLevelHelp } from './commandTable.js';
import { commands } from './commands.js';
import { describeError } from './describeError.js';
import { packageVersion } from './version.js';

export type CommandLineOutput = { readonly out: (text: string) => void; readonly err: (text: string) => void };

const helpFlags = new Set(['--help', '-h']);
const versionFlags = new Set(['--version', '-v', '-V']);

/**
 * `supply-api <command> …`: one JSON document on stdout for commands that print data; logs and
 * progress on stderr; an error is one line on stderr and a non-zero exit (2 for usage and
 * settings, 1 otherwise). `--help` on any command or action prints its help on stdout, exit 0.
 */
export async function runCommandLine(argv: readonly string[], output: CommandLineOutput, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  try {
    return await dispatch(argv, output, env);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      output.err(`supply-api: ${error.message}\n`);
      return 2;
    }
    output.err(`supply-api: error: ${describeError(error)}\n`);
    return 1;
  }
}

async function dispatch(argv: readonly string[], output: CommandLineOutput, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    output.err(topLevelHelp());
    return 2;
  }
  if (helpFlags.has(name) || name === 'help') {
    output.out(commandHelp(name === 'help' ? args : []));
    return 0;
  }
  if (versionFlags.has(name) || name === 'version') {
    output.out(`${packageVersion()}\n`);
    return 0;
  }
  const entry = commandTable[name];
  const loadCommand = commands[name];
  if (entry === undefined || loadCommand === undefined) {
    throw new UsageError(`unknown command "${name}"; supply-api --help lists the commands`);
  }
  const action = isGroup(entry) ? args[0] : undefined;
  // Options end at `--`; a --help before it asks for help, wherever it stands.
  const end = args.indexOf('--');
  if ((end === -1 ? args : args.slice(0, end)).some((arg) => helpFlags.has(arg))) {
    output.out(commandHelp(action === undefined ? [name] : [name, action]));
    return 0;
  }
  if (isGroup(entry) && (action === undefined || entry.actions[action] === undefined)) {
    const actions = Object.keys(entry.actions).join(', ');
    throw new UsageError(`${action === undefined ? `${name} needs an action` : `unknown ${name} action "${action}"`}: one of ${actions}; supply-api ${name} --help shows them`);
  }
  const config = loadConfig(env);
  // Commands keep stderr quiet unless LOG_LEVEL asks for more; `serve` logs at LOG_LEVEL (info).
  const logger = createLogger(env.LOG_LEVEL ? config.logLevel : 'warn');
  const command = await loadCommand();
  return command({ args, config, logger, clock: systemClock });
}
