import fc from 'fast-check';
import { parseTimestamp } from '../../src/timestamps';

describe('timestamp parsing', () => {
  test.each([
    ['2026-11-22T10:15:30Z', '2026-11-22T10:15:30.000Z'],
    ['2026-11-22T10:15:30.123Z', '2026-11-22T10:15:30.123Z'],
    ['2026-11-22T10:15:30.123456789Z', '2026-11-22T10:15:30.123Z'],
    ['2026-11-22T10:15:30.1Z', '2026-11-22T10:15:30.100Z'],
    ['2026-11-22T12:15:30+02:00', '2026-11-22T10:15:30.000Z'],
    ['2026-11-22T05:15:30.5-05:00', '2026-11-22T10:15:30.500Z'],
    ['2026-11-22T10:15:30+0000', '2026-11-22T10:15:30.000Z'],
    ['2026-11-22T10:15:30 00:00', '2026-11-22T10:15:30.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'],
    ['2026-11-22T10:15Z', '2026-11-22T10:15:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['0001-01-01T01:00:00+01:00', '0001-01-01T00:00:00.000Z'],
  ])('%s is %s', (input, expected) => {
    expect(parseTimestamp(input)?.toISOString()).toBe(expected);
  });

  test.each([
    'yesterday',
    '2024-13-45T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2026-11-22',
    '2026-11-22T10:15:30',
    '2026-11-22T10:15',
    '2026-11-22T10:15.5Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-11-22T10:15:30+25:00',
    '1700000000',
    '',
    // Years 1 to 9999, after the offset: what PostgreSQL's timestamptz and the gpodder timestamps hold.
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:30:00+01:00',
    '9999-12-31T23:00:00-05:00',
  ])('%s is rejected', (input) => {
    expect(parseTimestamp(input)).toBeUndefined();
  });

  test('any instant survives a round trip through toISOString, and through an offset form', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }), (d) => {
        expect(parseTimestamp(d.toISOString())?.getTime()).toBe(d.getTime());
        expect(parseTimestamp(d.toISOString().replace('Z', '+00:00'))?.getTime()).toBe(d.getTime());
      }),
    );
  });

  test('never throws', () => {
    fc.assert(fc.property(fc.string(), (s) => void parseTimestamp(s)));
  });
});
