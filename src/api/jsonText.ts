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
  // One list of pieces, joined once: the page's text is copied once (a join per level copied it
  // for each level, a 28 KB string of garbage a page of balances).
  const pieces: string[] = ['{'];
  for (const [name, value] of Object.entries(body)) {
    if (value instanceof JsonText) {
      member(pieces, name, value.text);
    } else if (Array.isArray(value) && holdsJsonText(value)) {
      member(pieces, name, '[');
      value.forEach((element: unknown, index) => {
        if (index > 0) pieces.push(',');
        // An element JSON.stringify cannot write (undefined, a function) is null in an array.
        pieces.push(element instanceof JsonText ? element.text : (JSON.stringify(element) ?? 'null'));
      });
      pieces.push(']');
    } else {
      const text = JSON.stringify(value) as string | undefined;
      // Left out as JSON.stringify leaves them out (undefined, functions, symbols).
      if (text !== undefined) member(pieces, name, text);
    }
  }
  pieces.push('}');
  return pieces.join('');
}

/** `"name":text`, after a comma unless it is the object's first member. */
function member(pieces: string[], name: string, text: string): void {
  if (pieces.length > 1) pieces.push(',');
  pieces.push(JSON.stringify(name), ':', text);
}

function holdsJsonText(value: unknown): boolean {
  return value instanceof JsonText || (Array.isArray(value) && value.some((element) => element instanceof JsonText));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
