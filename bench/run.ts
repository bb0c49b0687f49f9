/**
 * Benchmark dispatcher: `npm run bench -- NAME [options]`. Each bench is a module whose run()
 * returns its figures; progress goes to stderr and the result is the last line on stdout.
 */
export type BenchResult = {
  readonly bench: string;
  readonly figures: Readonly<Record<string, number>>;
  readonly ratio?: number;
  readonly target?: Readonly<Record<string, number>>;
};

export type BenchModule = { run(args: readonly string[]): Promise<BenchResult> };

const benches: Readonly<Record<string, () => Promise<BenchModule>>> = {
  eventstore: () => import('./eventstore.js'),
  replay: () => import('./replay.js'),
  lag: () => import('./lag.js'),
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
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
