import type { ColumnValue } from './projection.js';

/**
 * Rows in COPY's text format (one line a row, tab between columns, `\N` for NULL), for
 * `COPY … FROM STDIN`. Text is escaped as COPY reads it back: backslash, and the tab, newline and
 * carriage return that would otherwise end a column or a row.
 */
export function copyText(rows: readonly (readonly ColumnValue[])[]): string {
  let text = '';
  for (const row of rows) {
    let line = '';
    for (let column = 0; column < row.length; column += 1) {
      if (column > 0) line += '\t';
      line += copyValue(row[column] ?? null);
    }
    text += `${line}\n`;
  }
  return text;
}

const needsEscape = /[\\\t\n\r]/;
const escapes: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyValue(value: ColumnValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'string') return needsEscape.test(value) ? value.replace(/[\\\t\n\r]/g, (character) => escapes[character] ?? character) : value;
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return String(value);
}
