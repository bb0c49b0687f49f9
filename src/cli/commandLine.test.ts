import { describe, expect, test } from 'vitest';
import { allProjections } from '../../projections/index.js';
import { runCli } from '../../test/support/cli.js';
import { commandTable, isGroup } from './commandTable.js';
import { commands } from './commands.js';
import { runCommandLine } from './runCommandLine.js';

/** Every command and action of the table, as the words typed after `supply-api`. */
const paths = Object.entries(commandTable).flatMap(([command, entry]) =>
  isGroup(entry) ? [[command], ...Object.keys(entry.actions).map((action) => [command, action])] : [[command]],
);

async function run(argv: readonly string[], env: Record<string, string | undefined> = {}) {
  let out = '';
  let err = '';
  const code = await runCommandLine(argv, { out: (text) => (out += text), err: (text) => (err += text) }, env);
  return { code, out, err };
}

describe('supply-api --help', () => {
  test('every command has its help and every command in the help can run', () => {
    expect(Object.keys(commandTable).sort()).toEqual(Object.keys(commands).sort());
  });

  test.each(paths.map((path) => [path.join(' '), path]))('%s --help prints its usage and options on stdout, exit 0, without reading the settings', async (_name, path) => {
    // A broken setting does not matter: help needs none.
    for (const flag of ['--help', '-h']) {
      const result = await run([...path, flag], { DATABASE_URL: 'mysql://nowhere' });
      expect(result.code).toBe(0);
      expect(result.err).toBe('');
      expect(result.out).toMatch(new RegExp(`^usage: supply-api ${path.join(' ')}`));
    }
    const [command, action] = path;
    const entry = commandTable[command ?? ''];
    if (entry === undefined) throw new Error('no entry');
    const spec = isGroup(entry) ? (action === undefined ? undefined : entry.actions[action]) : entry;
    const help = (await run([...path, '--help'])).out;
    for (const option of Object.keys(spec?.options ?? {})) expect(help).toContain(`--${option}`);
    // An option's value after --help does not stop the help either.
    expect((await run([...path, '--workspace', 'x', '--help'])).code).toBe(0);
  });

  test('the top-level help lists every command and action with every option', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const path of paths.filter((p) => !isGroup(commandTable[p[0] ?? ''] ?? { summary: '', options: {} }) || p.length === 2)) {
      const [command, action] = path;
      const entry = commandTable[command ?? ''];
      if (entry === undefined) throw new Error('no entry');
      const spec = isGroup(entry) ? entry.actions[action ?? ''] : entry;
      const line = help.out.split('\n').find((text) => text.startsWith(`  ${path.join(' ')}`));
      expect(line, path.join(' ')).toBeDefined();
      for (const option of Object.keys(spec?.options ?? {})) expect(line, path.join(' ')).toContain(`--${option}`);
    }
    expect(help.out).toContain('console sign-in-code --workspace W --member M');
    expect(help.out).toContain('projections replay [--projection NAME[,NAME]] [--strict] [--parallel N] [--batch N] [--fold N] [--fresh]');
    expect(await run(['help', 'keys', 'issue'])).toMatchObject({ code: 0, out: expect.stringMatching(/^usage: supply-api keys issue --workspace W --member M --scopes a,b/) });
  });

  test('the projections a replay can name are the ones listed in its help', async () => {
    const help = (await run(['projections', 'replay', '--help'])).out;
    expect(help).toContain(allProjections.map((p) => p.name).join(', '));
  });

  test('without a command: the usage on stderr, exit 2; an unknown command or action or option: one line, exit 2', async () => {
    const none = await run([]);
    expect(none).toMatchObject({ code: 2, out: '' });
    expect(none.err).toMatch(/^usage: supply-api <command>/);
    for (const argv of [['frobnicate'], ['keys'], ['keys', 'mint'], ['console', 'advance-order', '--order'], ['console', 'place-order', '--workspace', 'w', '--order', 'o'], ['projections', 'wait', '--timeout', 'soon'], ['evidence', 'verify']]) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err.trim().split('\n'), argv.join(' ')).toHaveLength(1);
    }
  });

  test('an option without its value, or with a negative number, is one line naming the option and what it takes, exit 2', async () => {
    const cases: [readonly string[], string][] = [
      [['projections', 'wait', '--timeout', '-5'], 'supply-api: --timeout must be a whole number from 0 to 86400 (got "-5")'],
      [['projections', 'wait', '--timeout=-5'], 'supply-api: --timeout must be a whole number from 0 to 86400 (got "-5")'],
      [['seed', '--tenants', '-1'], 'supply-api: --tenants must be a whole number'],
      [['projections', 'wait', '--timeout'], 'supply-api: --timeout needs a value (--timeout S); usage: supply-api projections wait [--timeout S]'],
      [['projections', 'wait', '--timeout', '--json'], 'supply-api: --timeout needs a value (--timeout S); usage: supply-api projections wait [--timeout S]'],
      [['projections', 'wait', '--nope'], 'supply-api: unknown option --nope; usage: supply-api projections wait [--timeout S]'],
      [['projections', 'status', '--json=yes'], 'supply-api: --json takes no value; usage: supply-api projections status [--json]'],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err.trim(), argv.join(' ')).toContain(message);
      expect(result.err.trim().split('\n'), argv.join(' ')).toHaveLength(1);
    }
  });

  test('scopes no key can hold are not offered, and asking for them is a usage error', async () => {
    for (const scopes of ['bogus:read', 'orders.value:read', 'orders.patient_ref:read', ',']) {
      const result = await run(['keys', 'issue', '--workspace', 'w', '--member', 'm', '--scopes', scopes]);
      expect(result.code, scopes).toBe(2);
      const offered = /a key can hold (.*)$/m.exec(result.err)?.[1];
      if (scopes !== ',') expect(offered?.split(', '), scopes).toEqual(['clinics:read', 'catalog:read', 'catalog.cost:read', 'inventory:read', 'orders:read', 'fulfillment:read', 'analytics:read']);
    }
    expect((await run(['keys', 'issue', '--help'])).out).not.toMatch(/orders\.(value|patient_ref):read/);
    expect((await run(['keys', 'revoke', '--prefix', 'svc_test_toolong'])).code).toBe(2);
  });

  test('the real executable: --version prints the package version, --help the usage', async () => {
    const version = await runCli(['--version']);
    expect(version).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
    const help = await runCli(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: supply-api serve \[--port N\]/);
  });
});
