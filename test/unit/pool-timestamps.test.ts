import fc from 'fast-check';
import { parseTimestamptz, pgParseTimestamptz as reference } from '../../src/db/timestamptz';

// What PostgreSQL sends for a timestamptz: "YYYY-MM-DD HH:MM:SS[.ffffff]+HH[:MM]" (or more unusual forms).
const asPostgresSends = fc
  .record({
    t: fc.date({ min: new Date('0100-01-02T00:00:00Z'), max: new Date('9999-12-30T23:59:59Z'), noInvalidDate: true }),
    micros: fc.integer({ min: 0, max: 999 }),
    fracDigits: fc.integer({ min: 0, max: 6 }),
    offset: fc.integer({ min: -15 * 60, max: 15 * 60 }),
  })
  .map(({ t, micros, fracDigits, offset }) => {
    const local = new Date(t.getTime() + offset * 60_000);
    const frac = `${String(local.getUTCMilliseconds()).padStart(3, '0')}${String(micros).padStart(3, '0')}`
      .slice(0, fracDigits)
      .replace(/0+$/, '');
    const abs = Math.abs(offset);
    const hh = String(Math.floor(abs / 60)).padStart(2, '0');
    const mm = abs % 60 ? `:${String(abs % 60).padStart(2, '0')}` : '';
    const iso = local.toISOString();
    return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac ? `.${frac}` : ''}${offset < 0 ? '-' : '+'}${hh}${mm}`;
  });

test('reads every timestamptz PostgreSQL sends exactly as pg itself does', () => {
  fc.assert(
    fc.property(asPostgresSends, (v) => {
      expect(parseTimestamptz(v).getTime()).toBe(reference(v).getTime());
    }),
    { numRuns: 5000 },
  );
});

test('the forms it does not read itself are handed to pg: the same result either way', () => {
  for (const v of [
    '2026-11-22 10:15:30+00',
    '2026-11-22 10:15:30.1+00',
    '2026-11-22 10:15:30.123456-09:30',
    '0099-01-01 00:00:00+00',
    '10000-01-01 00:00:00+00',
    '2026-11-22 10:15:30+05:30:15',
    '2026-11-22 10:15:30+00 BC',
    'infinity',
    '-infinity',
  ]) {
    // pg reads infinity as a number, not a Date: compare what each gives as a number.
    expect(Number(parseTimestamptz(v))).toEqual(Number(reference(v)));
  }
});
