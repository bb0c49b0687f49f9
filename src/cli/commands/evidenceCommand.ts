import { UnknownEvidenceError, verifyEvidence } from '../../reporting/verifyEvidence.js';
import { openServices } from '../../main/services.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { parseCommandOptions } from '../options.js';
import { printJson } from '../output.js';
import { createProgressBar } from '../progressBar.js';

/**
 * `evidence verify ID`: recomputes the figure from the event log up to the recorded checkpoint
 * and prints `{ match, recorded, recomputed, … }`; exits 1 on a mismatch.
 */
export const evidenceCommand: Command = async ({ args, config, logger, clock }) => {
  const [action, ...rest] = args;
  if (action !== 'verify') throw new UsageError(`unknown evidence action "${String(action)}"`);
  const { positionals, usage } = parseCommandOptions(rest, ['evidence', 'verify'], commandSpec('evidence', 'verify'));
  const [evidenceId] = positionals;
  if (evidenceId === undefined) throw new UsageError(`EVIDENCE_ID is required; usage: ${usage}`);
  const services = await openServices(config, logger, clock);
  const bar = createProgressBar('evidence: reading the log', 'events', true);
  let started = false;
  try {
    const { eventCount } = await services.eventStore.head();
    const verification = await verifyEvidence(services.database.pool, services.eventStore, evidenceId, {
      onProgress: (read) => {
        if (!started) bar.start(Number(eventCount));
        started = true;
        bar.update(read);
      },
    });
    if (started) bar.stop();
    printJson(verification);
    if (!verification.match) process.stderr.write(`evidence ${evidenceId} does not match: ${verification.reason ?? 'the recomputed figure differs from the recorded one'}\n`);
    return verification.match ? 0 : 1;
  } catch (error) {
    if (started) bar.stop();
    if (error instanceof UnknownEvidenceError) throw new UsageError(error.message);
    throw error;
  } finally {
    await services.close();
  }
};
