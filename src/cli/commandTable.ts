import { issuableScopes } from '../keys/scopes.js';

/**
 * Every command of `supply-api`, its options and its help, declared once: the parser of each
 * command takes its options from here, and `--help` and the top-level usage are written from here,
 * so that neither can forget an option. Loads nothing else (help answers without a database).
 */
export type OptionSpec = {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** How the value is written in the usage line (`N`, `a,b`); absent for flags. */
  readonly value?: string;
  readonly required?: boolean;
  readonly description: string;
};

export type CommandSpec = {
  readonly summary: string;
  /** Positional arguments, as written in the usage line. */
  readonly arguments?: readonly string[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Lines printed under the options. */
  readonly notes?: readonly string[];
};

export type CommandGroup = { readonly summary: string; readonly actions: Readonly<Record<string, CommandSpec>> };

const workspace: OptionSpec = { type: 'string', value: 'W', required: true, description: 'the workspace (tenant) id, e.g. from seed' };
const member: OptionSpec = { type: 'string', value: 'M', required: true, description: 'the member id, e.g. from seed' };
const prints = (what: string) => `Prints ${what} on stdout.`;

const seedScales = 'small (the demo: about 4 000 events a workspace, 7 000 to 8 100 for 2 workspaces over 90 days), medium (100 000 to 115 000 in all) or large (1 000 000 to 1 100 000 in all)';

export const commandTable: Readonly<Record<string, CommandSpec | CommandGroup>> = {
  serve: {
    summary: 'Runs the service (migrates the database first); all roles by default.',
    options: {
      port: { type: 'string', value: 'N', description: 'HTTP port (default PORT, 8080; 0 picks a free one). Checked before anything else starts' },
      roles: { type: 'string', value: 'api,projector,worker', description: 'the roles of this process: api serves /v1 and /mcp, projector folds the log into the read tables, worker builds exports' },
      demo: { type: 'boolean', description: 'seeds the demo history on first start, issues a fresh demo key (revoking the previous one) and prints it with a sign-in code for /mcp' },
    },
    notes: ['Every role serves /healthz, /readyz and /metrics. Stops cleanly on SIGINT or SIGTERM.'],
  },
  migrate: {
    summary: `Applies the database migrations (migrations/) not applied yet. ${prints('{ engine, database, [dataDir,] applied, current }')}`,
    options: {},
  },
  seed: {
    summary: `Appends a realistic, deterministic history of dental organisations to the event store. ${prints('{ tenants: [{ workspaceId, memberIds, members, clinicIds, warehouseIds, orderIds, boxIds, itemIds }] }')}`,
    options: {
      tenants: { type: 'string', value: 'N', description: 'workspaces to create, 1 to 100 (default 2)' },
      days: { type: 'string', value: 'D', description: 'days of history, 1 to 3650 (default 90)' },
      seed: { type: 'string', value: 'S', description: 'the random seed; the same seed gives the same events and ids (default 1)' },
      scale: { type: 'string', value: 'small|medium|large', description: `activity per day: ${seedScales}` },
      'as-of': { type: 'string', value: 'YYYY-MM-DD', description: 'the UTC day the history ends (default today)' },
    },
  },
  keys: {
    summary: 'Issues, revokes and lists API keys.',
    actions: {
      issue: {
        summary: `Issues a key for a member holding integrations.manage. ${prints('{ key, prefix, workspaceId, scopes }')} This is the only time the full key is shown.`,
        options: {
          workspace,
          member,
          scopes: { type: 'string', value: 'a,b', required: true, description: 'comma-separated scopes the key holds (see below)' },
          name: { type: 'string', value: 'N', description: 'a name for operators (default integration)' },
        },
        notes: [`Scopes a key can hold: ${issuableScopes.join(', ')}.`, 'At most 10 active keys per workspace.'],
      },
      revoke: {
        summary: `Revokes a key; effective on the next request. ${prints('{ prefix, workspaceId, status, revokedAt }')}`,
        options: { prefix: { type: 'string', value: 'P', required: true, description: 'the key\'s 12-character prefix, e.g. svc_test_AbC' } },
      },
      list: {
        summary: `Lists a workspace's keys: prefixes, names, scopes, states; never a key or its hash. ${prints('{ workspaceId, keys }')}`,
        options: { workspace },
      },
    },
  },
  console: {
    summary: 'Single actions of the simulated console: each appends the console\'s events.',
    actions: {
      'suspend-member': { summary: 'Suspends a member: their keys and assistant sign-ins are refused from the next request.', options: { workspace, member } },
      'reactivate-member': { summary: 'Reactivates a member (their earlier keys stay refused; issue new ones).', options: { workspace, member } },
      'suspend-tenant': { summary: 'Suspends a workspace: every key of it is refused from the next request.', options: { workspace } },
      'reactivate-tenant': { summary: 'Reactivates a workspace.', options: { workspace } },
      'advance-order': {
        summary: 'Appends the next status event of one order along the happy path.',
        options: { workspace, order: { type: 'string', value: 'O', required: true, description: 'the order id' } },
      },
      'place-order': {
        summary: `Drafts and submits a new order at a clinic. ${prints('{ orderId, number }')}`,
        options: { workspace, clinic: { type: 'string', value: 'C', description: 'the clinic id (default the workspace\'s first clinic)' } },
      },
      'sign-in-code': {
        summary: `Makes a one-time sign-in code for the /authorize page of the assistant endpoint (single use, 10 minutes). ${prints('{ signInCode, expiresAt }')}`,
        options: { workspace, member },
      },
    },
  },
  projections: {
    summary: 'Shows, waits for and rebuilds the read models.',
    actions: {
      status: {
        summary: 'Per projection: state, generation, checkpoint, lag, events applied, dead letters, replays. A table on a terminal; JSON when piped or with --json.',
        options: { json: { type: 'boolean', description: 'prints the JSON document even on a terminal' } },
      },
      wait: {
        summary: 'Waits until every projection is live at the head of the log, showing the lag on stderr. Prints the status as JSON; exits 0 when caught up, 1 on timeout.',
        options: { timeout: { type: 'string', value: 'S', description: 'seconds to wait, 0 to 86400 (default 60)' } },
      },
      replay: {
        summary: `Rebuilds projections beside the live tables with a progress bar, then switches atomically; /v1 keeps answering throughout; resumes a killed rebuild unless --fresh. ${prints('the replay\'s result')}`,
        options: {
          projection: { type: 'string', multiple: true, value: 'NAME[,NAME]', description: 'only these projections (default all): tenants, locations, catalog, boxes, stock_movements, orders, fulfillments, analytics' },
          strict: { type: 'boolean', description: 'decodes every event through its schema (for a log that may hold events not written by this code)' },
          parallel: { type: 'string', value: 'N', description: 'projection transactions at once, 1 to 16 (default one a core, at least 2; 1 on the embedded database)' },
          batch: { type: 'string', value: 'N', description: 'events read a batch, 1 to 100000 (default 5000)' },
          fold: { type: 'string', value: 'N', description: 'events a projection folds before it writes, 0 to 10000000 (default 50000; 0 writes every batch)' },
          fresh: {
            type: 'boolean',
            description: 'starts over from the start of the log; by default a replay that was killed is resumed from its last committed batch',
          },
        },
      },
    },
  },
  openapi: {
    summary: 'Prints the OpenAPI document of /v1 (the one GET /openapi.json serves); needs no database.',
    options: { out: { type: 'string', value: 'FILE', description: 'writes the document to FILE instead of stdout (e.g. docs/openapi.json)' } },
  },
  evidence: {
    summary: 'Checks analytics evidence against the event log.',
    actions: {
      verify: {
        summary: `Recomputes the figure of an evidence id from the log up to its recorded checkpoint, independently of the projection. ${prints('{ match, recorded, recomputed, … }')} Exits 1 on a mismatch.`,
        arguments: ['EVIDENCE_ID'],
        options: {},
      },
    },
  },
};

export function isGroup(entry: CommandSpec | CommandGroup): entry is CommandGroup {
  return 'actions' in entry;
}

/** The spec of `command action` (or of `command` alone); throws when the table has none. */
export function commandSpec(command: string, action?: string): CommandSpec {
  const entry = commandTable[command];
  const spec = entry === undefined ? undefined : isGroup(entry) ? (action === undefined ? undefined : entry.actions[action]) : entry;
  if (spec === undefined) throw new Error(`no command ${[command, action].filter(Boolean).join(' ')}`);
  return spec;
}

/** `supply-api keys issue --workspace W … [--name N]` */
export function usageLine(path: readonly string[], spec: CommandSpec): string {
  const options = Object.entries(spec.options).map(([name, option]) => {
    const text = option.value === undefined ? `--${name}` : `--${name} ${option.value}`;
    return option.required === true ? text : `[${text}]`;
  });
  return ['supply-api', ...path, ...(spec.arguments ?? []), ...options].join(' ');
}

/** The parseArgs options of a command (its declared options and --help). */
export function parserOptions(spec: CommandSpec): Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const [name, option] of Object.entries(spec.options)) options[name] = option.multiple === true ? { type: option.type, multiple: true } : { type: option.type };
  options.help = { type: 'boolean', short: 'h' };
  return options;
}

const helpOption = { flag: '-h, --help', description: 'shows this help' };

/** The help of one command or action. */
export function commandHelp(path: readonly string[]): string {
  const [command, action] = path;
  const entry = command === undefined ? undefined : commandTable[command];
  if (command === undefined || entry === undefined) return topLevelHelp();
  if (isGroup(entry) && (action === undefined || entry.actions[action] === undefined)) {
    const lines = Object.entries(entry.actions).map(([name, spec]) => `  ${usageLine([command, name], spec)}\n      ${spec.summary}`);
    return `usage: supply-api ${command} <${Object.keys(entry.actions).join('|')}> [options]\n\n${entry.summary}\n\n${lines.join('\n')}\n\nsupply-api ${command} <action> --help shows an action's options.\n`;
  }
  const spec = commandSpec(command, action);
  const rows = [
    ...Object.entries(spec.options).map(([name, option]) => ({ flag: option.value === undefined ? `--${name}` : `--${name} ${option.value}`, description: option.description })),
    helpOption,
  ];
  const width = Math.max(...rows.map((row) => row.flag.length));
  const options = rows.map((row) => `  ${row.flag.padEnd(width)}  ${row.description}`).join('\n');
  const notes = spec.notes === undefined ? '' : `\n${spec.notes.join('\n')}\n`;
  return `usage: ${usageLine(path, spec)}\n\n${spec.summary}\n\noptions:\n${options}\n${notes}`;
}

export const exitCodes = '0 done, 1 failed (the message says why), 2 usage or settings error';

/** `supply-api --help`: every command and action with its options. */
export function topLevelHelp(): string {
  const lines: string[] = [];
  for (const [command, entry] of Object.entries(commandTable)) {
    if (isGroup(entry)) {
      for (const [action, spec] of Object.entries(entry.actions)) lines.push(`  ${usageLine([command, action], spec).replace(/^supply-api /, '')}`);
    } else {
      lines.push(`  ${usageLine([command], entry).replace(/^supply-api /, '')}`);
    }
  }
  return `usage: supply-api <command> [options]

${lines.join('\n')}

  supply-api <command> --help    a command's options and what it prints
  supply-api --version           the version

Commands that print data print one JSON document on stdout; logs and progress go to stderr.
Exit codes: ${exitCodes}.
Settings come from the environment: PORT, DATABASE_URL, EVENTSTORE_URL, REDIS_URL, S3_BUCKET,
DATA_DIR, LOG_LEVEL, … (see README.md); a bad value stops the command with a message naming it.
`;
}
