/** One row of the export: a briefing figure as the briefing operation serves it. */
export type CsvFigure = {
  readonly metric: string;
  readonly dimension?: string;
  readonly label: string;
  readonly value: number | null;
  readonly unit: string;
  readonly evidenceId: string;
};

export const briefingCsvHeader = ['metric', 'dimension', 'label', 'value', 'unit', 'evidenceId'] as const;

const byteOrderMark = '\uFEFF';
const lineEnd = '\r\n';
/** Spreadsheets read a cell starting with one of these as a formula (CSV injection). */
const formulaStart = /^[=+\-@\t\r]/;
const needsQuotes = /[",\r\n]/;

/**
 * The management briefing as CSV: UTF-8 with a byte order mark, CRLF after every line, the header
 * row, then one row per figure in the briefing's order.
 */
export function renderBriefingCsv(figures: readonly CsvFigure[]): Buffer {
  const lines = [briefingCsvHeader.map(csvCell), ...figures.map(figureCells)].map((cells) => cells.join(',') + lineEnd);
  return Buffer.from(byteOrderMark + lines.join(''), 'utf8');
}

function figureCells(figure: CsvFigure): string[] {
  return [figure.metric, figure.dimension ?? '', figure.label, csvNumber(figure.value), figure.unit, figure.evidenceId].map(csvCell);
}

/** A figure without a sample is an empty cell, never 0. */
function csvNumber(value: number | null): string {
  if (value === null) return '';
  if (!Number.isFinite(value)) throw new Error(`a briefing figure is not a finite number: ${value}`);
  return String(value);
}

/** Neutralises formula starts with a single quote, then quotes cells that hold a comma, quote or line break. */
export function csvCell(text: string): string {
  const safe = formulaStart.test(text) ? `'${text}` : text;
  return needsQuotes.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
