import { loadConfig, ConfigError } from '../config/config.js';
import { systemClock } from '../platform/clock.js';
import { createLogger } from '../platform/logger.js';
import { UsageError } from './cliError.js';
import { commands, usage } from './commands.js';
import { describeError } from './describeError.js';

/**
 * `supply-api <command> …`: one JSON document on stdout for commands that print data; logs and
 * progress on stderr; an error is one line on stderr and a non-zero exit (2 for usage, 1 otherwise).
 */
async function main(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stderr.write(usage);
    return name === undefined ? 2 : 0;
  }
  const loadCommand = commands[name];
  if (!loadCommand) {
    throw new UsageError(`unknown command "${name}"\n${usage}`);
  }
  const config = loadConfig(process.env);
  // Commands keep stderr quiet unless LOG_LEVEL asks for more; `serve` logs at LOG_LEVEL (info).
  const logger = createLogger(process.env.LOG_LEVEL ? config.logLevel : 'warn');
  const command = await loadCommand();
  return command({ args, config, logger, clock: systemClock });
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`supply-api: ${error.message}\n`);
    process.exitCode = 2;
  } else if (error instanceof ConfigError) {
    process.stderr.write(`supply-api: ${error.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`supply-api: error: ${describeError(error)}\n`);
    process.exitCode = 1;
  }
}
