import { describe, expect, test } from 'vitest';
import { csvCell, renderBriefingCsv, type CsvFigure } from './briefingCsv.js';

const figure = (overrides: Partial<CsvFigure> = {}): CsvFigure => ({
  metric: 'LOW_STOCK',
  label: 'Items below their reorder point',
  value: 3,
  unit: 'count',
  evidenceId: 'ev1.d3M.abc',
  ...overrides,
});

describe('renderBriefingCsv', () => {
  test('starts with the UTF-8 byte order mark, then the header row ending in CRLF', () => {
    const bytes = renderBriefingCsv([]);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe('metric,dimension,label,value,unit,evidenceId\r\n');
  });

  test('one CRLF-terminated row per figure, in order; the dimension is empty for a single-value metric', () => {
    const text = renderBriefingCsv([
      figure(),
      figure({ metric: 'APPROVAL_BACKLOG', dimension: 'under_24h', label: 'Awaiting approval under 24 h', value: 0, unit: 'orders' }),
    ])
      .subarray(3)
      .toString('utf8');
    expect(text).toBe(
      'metric,dimension,label,value,unit,evidenceId\r\n' +
        'LOW_STOCK,,Items below their reorder point,3,count,ev1.d3M.abc\r\n' +
        'APPROVAL_BACKLOG,under_24h,Awaiting approval under 24 h,0,orders,ev1.d3M.abc\r\n',
    );
    expect(text.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
  });

  test('a figure without a sample has an empty value, never 0; decimals are written as they are', () => {
    const text = renderBriefingCsv([figure({ metric: 'ORDER_CYCLE_TIME', value: null, unit: 'hours' }), figure({ value: 12.25 })]).toString('utf8');
    expect(text).toContain('\r\nORDER_CYCLE_TIME,,Items below their reorder point,,hours,ev1.d3M.abc\r\n');
    expect(text).toContain(',12.25,');
  });

  test('labels are written in UTF-8 as given (localized labels keep their accents)', () => {
    const bytes = renderBriefingCsv([figure({ label: 'Pedidos aún no despachados' })]);
    expect(bytes.includes(Buffer.from('aún', 'utf8'))).toBe(true);
    expect(bytes.includes(Buffer.from('aún', 'latin1'))).toBe(false);
  });

  test('cells holding a comma, a quote or a line break are quoted, quotes doubled', () => {
    const text = renderBriefingCsv([figure({ label: 'Consumption: Gloves, nitrile "M"\nbox', unit: 'pair\r' })]).toString('utf8');
    expect(text.split('\r\n')[1]).toBe('LOW_STOCK,,"Consumption: Gloves, nitrile ""M""\nbox",3,"pair\r",ev1.d3M.abc');
  });

  test.each([
    ['=SUM(A1:A2)', "'=SUM(A1:A2)"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@cmd', "'@cmd"],
    ['\tx', "'\tx"],
    ['\rx', '"\'\rx"'],
    ['=HYPERLINK("http://x","y")', '"\'=HYPERLINK(""http://x"",""y"")"'],
    ['a=b', 'a=b'],
    ['', ''],
  ])('cell %j is written as %j', (input, expected) => {
    expect(csvCell(input)).toBe(expected);
  });

  test('the injection rule applies to every column, the value included', () => {
    const text = renderBriefingCsv([figure({ metric: '=X', dimension: '@d', label: '+l', value: -2, unit: '-u', evidenceId: '=e' })]).toString('utf8');
    expect(text.split('\r\n')[1]).toBe("'=X,'@d,'+l,'-2,'-u,'=e");
  });

  test('a value that is not a finite number is refused rather than written', () => {
    expect(() => renderBriefingCsv([figure({ value: Number.NaN })])).toThrow(/finite/);
  });
});
