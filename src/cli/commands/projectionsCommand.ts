import { availableParallelism } from 'node:os';
import { allProjections, projectionsNamed } from '../../../projections/index.js';
import { openServices } from '../../main/services.js';
import { bulkLoadOf } from '../../projecting/bulkLoad.js';
import { defaultFoldEvents, defaultReplayParallelism, replayProjections } from '../../projecting/replay.js';
import { projectionsReport, ProjectionsWaitTimeout, waitForProjections } from '../../projecting/status.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { integerOption, parseOptions } from '../options.js';
import { printJson } from '../output.js';
import { createProgressBar } from '../progressBar.js';

const usage = 'supply-api projections status | wait [--timeout S] | replay [--projection NAME] [--strict] [--parallel N] [--batch N] [--fold N]';

export const projectionsCommand: Command = async ({ args, config, logger, clock }) => {
  const [action, ...rest] = args;
  switch (action) {
    case 'status': {
      parseOptions(rest, {}, usage);
      const services = await openServices(config, logger, clock);
      try {
        printJson(await projectionsReport(services.database.pool, services.eventStore, allProjections));
        return 0;
      } finally {
        await services.close();
      }
    }
    case 'wait': {
      const { values } = parseOptions(rest, { timeout: { type: 'string' } }, usage);
      const timeout = integerOption(values.timeout, 'timeout', { min: 0, max: 86_400 }, 60);
      const services = await openServices(config, logger, clock);
      try {
        printJson(await waitForProjections(services.database.pool, services.eventStore, allProjections, timeout));
        return 0;
      } catch (error) {
        if (!(error instanceof ProjectionsWaitTimeout)) throw error;
        printJson(error.report);
        process.stderr.write(`${error.message}\n`);
        return 1;
      } finally {
        await services.close();
      }
    }
    case 'replay': {
      const { values } = parseOptions(
        rest,
        { projection: { type: 'string', multiple: true }, strict: { type: 'boolean' }, parallel: { type: 'string' }, batch: { type: 'string' }, fold: { type: 'string' } },
        usage,
      );
      const names = (values.projection ?? []).flatMap((value) => value.split(',')).map((name) => name.trim()).filter(Boolean);
      const projections = projectionsFromOption(names);
      const services = await openServices(config, logger, clock);
      // PGlite runs one transaction at a time: side-by-side projections would only queue there.
      const lanes = services.database.kind === 'pglite' ? 1 : defaultReplayParallelism(availableParallelism());
      const parallelism = integerOption(values.parallel, 'parallel', { min: 1, max: 16 }, Math.min(lanes, projections.length));
      const batchSize = integerOption(values.batch, 'batch', { min: 1, max: 100_000 }, 5000);
      // Events a folding projection folds before each write (0: each batch on its own).
      const foldEvents = integerOption(values.fold, 'fold', { min: 0, max: 10_000_000 }, defaultFoldEvents);
      const bar = createProgressBar('replay', 'events', true);
      let started = false;
      try {
        const result = await replayProjections({
          pool: services.database.pool,
          eventStore: services.eventStore,
          projections,
          logger,
          strict: values.strict === true,
          batchSize,
          parallelism,
          foldEvents,
          ...bulkLoadOf(services.database),
          onProgress: ({ seen, total }) => {
            // The total is the visible log when the replay starts; it grows if events arrive.
            if (!started) bar.start(total);
            started = true;
            bar.update(seen, total);
          },
        });
        bar.stop();
        printJson(result);
        return 0;
      } finally {
        bar.stop();
        await services.close();
      }
    }
    default:
      throw new UsageError(action === undefined ? `an action is required; usage: ${usage}` : `unknown action "${action}"; usage: ${usage}`);
  }
};

function projectionsFromOption(names: readonly string[]) {
  try {
    return projectionsNamed(names);
  } catch (error) {
    throw new UsageError(`--projection: ${error instanceof Error ? error.message : String(error)}`);
  }
}
