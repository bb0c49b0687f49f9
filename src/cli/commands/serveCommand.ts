import { allRoles, serve, type Role } from '../../main/serve.js';
import { createLogger } from '../../platform/logger.js';
import { UsageError } from '../cliError.js';
import type { Command } from '../command.js';
import { integerOption, parseOptions } from '../options.js';

const usage = 'supply-api serve [--port N] [--roles api,projector,worker] [--demo]';

export const serveCommand: Command = async ({ args, config, clock }) => {
  const { values } = parseOptions(args, { port: { type: 'string' }, roles: { type: 'string' }, demo: { type: 'boolean' } }, usage);
  const roles = parseRoles(values.roles);
  const port = integerOption(values.port, 'port', { min: 0, max: 65535 }, config.port);
  return serve(config, createLogger(config.logLevel), clock, { port, roles, demo: values.demo === true });
};

function parseRoles(value: string | undefined): Role[] {
  if (value === undefined) return [...allRoles];
  const roles = value.split(',').map((role) => role.trim()).filter((role) => role !== '');
  const unknown = roles.find((role) => !(allRoles as readonly string[]).includes(role));
  if (unknown !== undefined || roles.length === 0) {
    throw new UsageError(`--roles takes a comma-separated list of ${allRoles.join(', ')} (got "${value}")`);
  }
  return allRoles.filter((role) => roles.includes(role));
}
