import { describe, expect, test } from 'vitest';
import { parseStewardNames, serverLabel, synchronousStandbyNames } from './readReplicas.js';

describe('synchronous_standby_names as the steward writes it', () => {
  test('every named standby must apply a commit (ANY n of n), names sorted and quoted; none is empty', () => {
    expect(synchronousStandbyNames(['standby2', 'standby1', 'standby2'])).toBe('ANY 2 ("standby1", "standby2")');
    expect(synchronousStandbyNames([])).toBe('');
  });

  test('reads back what it wrote; leaves any other form to the operator', () => {
    expect(parseStewardNames('ANY 2 ("standby1", "standby2")')).toEqual(['standby1', 'standby2']);
    expect(parseStewardNames('')).toEqual([]);
    expect(parseStewardNames('ANY 1 ("standby1", "standby2")')).toBeUndefined();
    expect(parseStewardNames('FIRST 1 (standby1)')).toBeUndefined();
    expect(parseStewardNames('*')).toBeUndefined();
  });
});

test('a standby is named host:port/database, never with its credentials', () => {
  expect(serverLabel('postgres://reader:secret@standby1.internal/supply?sslmode=require')).toBe('standby1.internal:5432/supply');
  expect(serverLabel('postgresql://10.0.0.3:5433/supply')).toBe('10.0.0.3:5433/supply');
});
