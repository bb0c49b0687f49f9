/** A JSON document as the command line prints it: indented, bigints as text, one final newline. */
export function jsonText(document: unknown): string {
  return `${JSON.stringify(document, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value), 2)}\n`;
}

/** Every command that prints data prints exactly one JSON document on stdout. */
export function printJson(document: unknown): void {
  process.stdout.write(jsonText(document));
}
