/**
 * Benchmark dispatcher: `npm run bench -- NAME [options]`. Each bench is a module whose run()
 * returns its figures; progress goes to stderr and the result is the last line on stdout.
 */
export type BenchResult = {
  readonly bench: string;
  /** Flat figures, or one level of groups (e.g. per endpoint). */
  readonly figures: Readonly<Record<string, number | Readonly<Record<string, number>>>>;
  readonly ratio?: number;
  readonly target?: Readonly<Record<string, number>>;
  /** Per target: whether this run meets it. */
  readonly pass?: Readonly<Record<string, boolean>>;
  /** Set when the run is not valid (e.g. failed requests): the result is still printed, and the exit code is 1. */
  readonly failure?: string;
};

export type BenchModule = { run(args: readonly string[]): Promise<BenchResult> };

const benches: Readonly<Record<string, () => Promise<BenchModule>>> = {
  eventstore: () => import('./eventstore.js'),
  replay: () => import('./replay.js'),
  lag: () => import('./lag.js'),
  api: () => import('./api.js'),
  analytics: () => import('./analytics.js'),
  export: () => import('./export.js'),
  sync: () => import('./sync.js'),
  versions: () => import('./versions.js'),
};

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  const load = name === undefined ? undefined : benches[name];
  if (!load) {
    process.stderr.write(`usage: npm run bench -- <${Object.keys(benches).join('|')}> [options]\n`);
    return 2;
  }
  const result = await (await load()).run(args);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (result.failure !== undefined) {
    process.stderr.write(`\n*** BENCH ${result.bench.toUpperCase()} FAILED: ${result.failure}\n*** its figures are not valid\n`);
    return 1;
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
