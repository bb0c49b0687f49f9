/**
 * A value that is already JSON text (a read model's stored JSON, such as boxes.balance_json): an
 * answer's body sends it as it is, where JSON.stringify would rebuild it from an object.
 * JSON.stringify itself (the assistant endpoint, tests) gets the value it stands for.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text) as unknown;
  }
}

/**
 * The text JSON.stringify makes of `body`, with the JsonText found as a field of a plain object
 * body or as an element of an array in such a field (a list page's `data`) put in as it is.
 * Anything else goes through JSON.stringify, whatever it holds.
 */
export function jsonBodyText(body: unknown): string {
  if (!isPlainObject(body) || !Object.values(body).some(holdsJsonText)) return JSON.stringify(body);
  const members: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    const text = valueText(value);
    // Left out as JSON.stringify leaves them out (undefined, functions, symbols).
    if (text !== undefined) members.push(`${JSON.stringify(name)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

function holdsJsonText(value: unknown): boolean {
  return value instanceof JsonText || (Array.isArray(value) && value.some((element) => element instanceof JsonText));
}

function valueText(value: unknown): string | undefined {
  if (value instanceof JsonText) return value.text;
  if (Array.isArray(value) && holdsJsonText(value)) {
    // An element JSON.stringify cannot write (undefined, a function) is null in an array.
    return `[${value.map((element) => (element instanceof JsonText ? element.text : (JSON.stringify(element) ?? 'null'))).join(',')}]`;
  }
  return JSON.stringify(value) as string | undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
