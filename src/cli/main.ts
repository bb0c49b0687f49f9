import { runCommandLine } from './runCommandLine.js';

process.exitCode = await runCommandLine(
  process.argv.slice(2),
  { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
  process.env,
);
