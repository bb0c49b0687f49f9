import type { Config } from '../config/config.js';
import type { Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';

export type CommandContext = {
  readonly args: readonly string[];
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
};

/** Runs one command; resolves to the process exit code. */
export type Command = (context: CommandContext) => Promise<number>;
