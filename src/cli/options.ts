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
  try {
    const parsed = parseArgs({ args: [...args], options: parserOptions(spec), strict: true, allowPositionals: allowPositionals > 0 });
    if (parsed.positionals.length > allowPositionals) {
      throw new UsageError(`unexpected argument "${parsed.positionals[allowPositionals] ?? ''}"; usage: ${usage}`);
    }
    return { values: parsed.values as Record<string, string | boolean | string[] | undefined>, positionals: parsed.positionals, usage };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${message}; usage: ${usage}`);
  }
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
