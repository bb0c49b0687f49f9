import { parseArgs } from 'node:util';
import { UsageError } from './cliError.js';
import { parserOptions, usageLine, type CommandSpec } from './commandTable.js';

/**
 * Parses the options of `supply-api <path…>` strictly, as its spec in the command table declares
 * them; an unknown option or a stray argument is a UsageError showing the usage line.
 */
export function parseCommandOptions(args: readonly string[], path: readonly string[], spec: CommandSpec) {
  const usage = usageLine(path, spec);
  const allowPositionals = spec.arguments?.length ?? 0;
  const options = parserOptions(spec);
  try {
    const parsed = parseArgs({ args: joinNegativeValues(args, options), options, strict: true, allowPositionals: allowPositionals > 0 });
    if (parsed.positionals.length > allowPositionals) {
      throw new UsageError(`unexpected argument "${parsed.positionals[allowPositionals] ?? ''}"; usage: ${usage}`);
    }
    return { values: parsed.values as Record<string, string | boolean | string[] | undefined>, positionals: parsed.positionals, usage };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${parserProblem(error, spec)}; usage: ${usage}`);
  }
}

/**
 * `--timeout -5`: parseArgs takes a value starting with a dash for another option. A negative
 * number after an option that takes a value is that value (`--timeout=-5`), for the option's own
 * check to judge and name.
 */
function joinNegativeValues(args: readonly string[], options: ReturnType<typeof parserOptions>): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    const next = args[index + 1];
    if (arg.startsWith('--') && options[arg.slice(2)]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** parseArgs's refusal in the command line's words: the option, and what it takes. */
function parserProblem(error: unknown, spec: CommandSpec): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(--?[A-Za-z0-9-]+)/.exec(message)?.[1];
  if (option !== undefined && code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && spec.options[option.replace(/^-+/, '')]?.type === 'boolean') return `${option} takes no value`;
  if (option !== undefined && code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const value = spec.options[option.replace(/^-+/, '')]?.value;
    return `${option} needs a value${value === undefined ? '' : ` (${option} ${value})`}`;
  }
  if (option !== undefined && code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option}`;
  return message.split('\n')[0] ?? message;
}

export function requiredString(value: string | boolean | string[] | undefined, name: string, usage: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`--${name} is required; usage: ${usage}`);
  }
  return value.trim();
}

export function optionalString(value: string | boolean | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function integerOption(value: string | boolean | string[] | undefined, name: string, range: { min: number; max: number }, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) {
    throw new UsageError(`--${name} must be a whole number from ${range.min} to ${range.max} (got "${String(value)}")`);
  }
  const number = Number(value);
  if (number < range.min || number > range.max) {
    throw new UsageError(`--${name} must be a whole number from ${range.min} to ${range.max} (got ${number})`);
  }
  return number;
}

export function choiceOption<C extends string>(value: string | boolean | string[] | undefined, name: string, choices: readonly C[], fallback: C): C {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${choices.join(', ')} (got "${String(value)}")`);
  }
  return value as C;
}
