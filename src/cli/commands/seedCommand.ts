import { seed } from '../../console/seed.js';
import { historyDefaults, historyScales, startOfUtcDay } from '../../console/history/historyParams.js';
import { openServices } from '../../main/services.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { choiceOption, integerOption, optionalString, parseCommandOptions } from '../options.js';
import { printJson } from '../output.js';
import { createProgressBar } from '../progressBar.js';

export const seedCommand: Command = async ({ args, config, logger, clock }) => {
  const { values } = parseCommandOptions(args, ['seed'], commandSpec('seed'));
  const params = {
    tenants: integerOption(values.tenants, 'tenants', { min: 1, max: 100 }, historyDefaults.tenants),
    days: integerOption(values.days, 'days', { min: 1, max: 3650 }, historyDefaults.days),
    seed: integerOption(values.seed, 'seed', { min: 0, max: 2 ** 31 - 1 }, Number(historyDefaults.seed)),
    scale: choiceOption(values.scale, 'scale', historyScales, historyDefaults.scale),
    asOf: parseAsOf(optionalString(values['as-of'])) ?? startOfUtcDay(clock.now()),
  };
  const services = await openServices(config, logger, clock);
  const bar = createProgressBar('seed', 'events', params.scale !== 'small');
  try {
    bar.start(0);
    const summary = await seed({
      eventStore: services.eventStore,
      params,
      progress: ({ written, total }) => bar.update(written, total),
    });
    bar.stop();
    printJson(summary);
    return 0;
  } finally {
    bar.stop();
    await services.close();
  }
};

function parseAsOf(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const day = /^(\d{4}-\d{2}-\d{2})(T00:00(:00(\.000)?)?Z)?$/.exec(value)?.[1];
  const date = day === undefined ? undefined : new Date(`${day}T00:00:00.000Z`);
  if (date === undefined || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== day) {
    throw new UsageError(`--as-of must be a UTC date such as 2026-11-22 (got "${value}")`);
  }
  return date;
}
