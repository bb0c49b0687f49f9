/** Every command that prints data prints exactly one JSON document on stdout. */
export function printJson(document: unknown): void {
  process.stdout.write(`${JSON.stringify(document, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value), 2)}\n`);
}
