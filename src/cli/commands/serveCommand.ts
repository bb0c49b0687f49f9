import { setFlagsFromString } from 'node:v8';
import { allRoles, serve, type Role } from '../../main/serve.js';
import { createLogger } from '../../platform/logger.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { commandSpec } from '../commandTable.js';
import { integerOption, optionalString, parseCommandOptions } from '../options.js';

export const serveCommand: Command = async ({ args, config, clock }) => {
  const { values } = parseCommandOptions(args, ['serve'], commandSpec('serve'));
  const roles = parseRoles(optionalString(values.roles));
  const port = integerOption(values.port, 'port', { min: 0, max: 65535 }, config.port);
  if (roles.includes('api')) setFlagsFromString(requestHeapFlags);
  return serve(config, createLogger(config.logLevel), clock, { port, roles, demo: values.demo === true });
};

/**
 * V8's allocation-site pretenuring, for a process that serves requests: off. Under load, rows and
 * request objects that outlived one scavenge (32 requests in flight) got their allocation sites
 * pretenured, and from then on every row of every answer was allocated in the old generation:
 * about 2.5 MB promoted a scavenge and a mark-compact every 2 s on the balances page. Without it
 * (api bench, balances): scavenge time 1236 -> 564 ms, CPU 690 -> 586 us a request, peak RSS
 * 193 -> 173 MB. V8 reads the flag at each collection, so setting it before serving suffices.
 */
export const requestHeapFlags = '--no-allocation-site-pretenuring';

function parseRoles(value: string | undefined): Role[] {
  if (value === undefined) return [...allRoles];
  const roles = value.split(',').map((role) => role.trim()).filter((role) => role !== '');
  const unknown = roles.find((role) => !(allRoles as readonly string[]).includes(role));
  if (unknown !== undefined || roles.length === 0) {
    throw new UsageError(`--roles takes a comma-separated list of ${allRoles.join(', ')} (got "${value}")`);
  }
  return allRoles.filter((role) => roles.includes(role));
}
