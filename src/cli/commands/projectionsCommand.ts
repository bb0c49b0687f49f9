import { availableParallelism } from 'node:os';
import { allProjections, projectionsNamed } from '../../../projections/index.js';
import { openServices } from '../../main/services.js';
import { bulkLoadOf } from '../../projecting/bulkLoad.js';
import { defaultFoldEvents, defaultReplayParallelism, replayProjections } from '../../projecting/replay.js';
import { projectionsReport, ProjectionsWaitTimeout, waitForProjections, type ProjectionsReport } from '../../projecting/status.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { integerOption, parseCommandOptions } from '../options.js';
import { printJson } from '../output.js';
import { createProgressBar } from '../progressBar.js';
import { statusTable, waitLine } from '../statusTable.js';

/** How often `projections wait` reports while it waits, without a terminal (one line each). */
const waitReportMs = 3000;

export const projectionsCommand: Command = async ({ args, config, logger, clock }) => {
  const [action, ...rest] = args;
  if (action !== 'status' && action !== 'wait' && action !== 'replay') throw new UsageError(`unknown projections action "${String(action)}"`);
  const { values } = parseCommandOptions(rest, ['projections', action], commandSpec('projections', action));
  switch (action) {
    case 'status': {
      const services = await openServices(config, logger, clock);
      try {
        const report = await projectionsReport(services.database.pool, services.eventStore, allProjections);
        // A person at a terminal reads a table; a pipe or --json gets the JSON document.
        if (process.stdout.isTTY === true && values.json !== true) process.stdout.write(statusTable(report));
        else printJson(report);
        return 0;
      } finally {
        await services.close();
      }
    }
    case 'wait': {
      const timeout = integerOption(values.timeout, 'timeout', { min: 0, max: 86_400 }, 60);
      const services = await openServices(config, logger, clock);
      const progress = waitProgress();
      try {
        printJson(await waitForProjections(services.database.pool, services.eventStore, allProjections, timeout, { onReport: progress.report }));
        return 0;
      } catch (error) {
        if (!(error instanceof ProjectionsWaitTimeout)) throw error;
        printJson(error.report);
        process.stderr.write(`${error.message}\n`);
        return 1;
      } finally {
        progress.done();
        await services.close();
      }
    }
    case 'replay': {
      const names = (Array.isArray(values.projection) ? values.projection : []).flatMap((value) => value.split(',')).map((name) => name.trim()).filter(Boolean);
      const projections = projectionsFromOption(names);
      // 0: not given (the default depends on the database, known once it is open).
      const parallelOption = integerOption(values.parallel, 'parallel', { min: 1, max: 16 }, 0);
      const batchSize = integerOption(values.batch, 'batch', { min: 1, max: 100_000 }, 5000);
      // Events a folding projection folds before each write (0: each batch on its own).
      const foldEvents = integerOption(values.fold, 'fold', { min: 0, max: 10_000_000 }, defaultFoldEvents);
      const services = await openServices(config, logger, clock);
      // PGlite runs one transaction at a time: side-by-side projections would only queue there.
      const lanes = services.database.kind === 'pglite' ? 1 : defaultReplayParallelism(availableParallelism());
      const parallelism = parallelOption === 0 ? Math.min(lanes, projections.length) : parallelOption;
      const bar = createProgressBar('replay', 'events', true);
      try {
        const result = await replayProjections({
          pool: services.database.pool,
          eventStore: services.eventStore,
          projections,
          logger,
          strict: values.strict === true,
          fresh: values.fresh === true,
          batchSize,
          parallelism,
          foldEvents,
          ...bulkLoadOf(services.database),
          // The total is the visible log when the replay starts; it grows if events arrive.
          onProgress: ({ seen, total }) => bar.update(seen, total),
        });
        bar.stop();
        printJson(result);
        return 0;
      } finally {
        bar.stop();
        await services.close();
      }
    }
  }
};

function projectionsFromOption(names: readonly string[]) {
  try {
    return projectionsNamed(names);
  } catch (error) {
    throw new UsageError(`--projection: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * What `projections wait` shows on stderr while it waits: on a terminal one line rewritten in
 * place; otherwise a line every few seconds (and none when the first look finds every projection live).
 */
function waitProgress(): { report: (report: ProjectionsReport) => void; done: () => void } {
  const startedAt = performance.now();
  const terminal = process.stderr.isTTY === true;
  let lastLine = -Infinity;
  let shown = false;
  return {
    report: (report) => {
      const now = performance.now();
      const caughtUp = report.projections.every((p) => p.state === 'live');
      if (!shown && caughtUp) return;
      if (!terminal && now - lastLine < waitReportMs && !caughtUp) return;
      lastLine = now;
      shown = true;
      const line = waitLine(report, (now - startedAt) / 1000);
      process.stderr.write(terminal ? `\r\u001b[2K${line}` : `${line}\n`);
    },
    done: () => {
      if (shown && terminal) process.stderr.write('\n');
    },
  };
}
