import pg from 'pg';

/**
 * timestamptz values as PostgreSQL sends them: "2026-11-22 10:15:30.123456+00" (or with "+05:30").
 * pg's built-in parser runs a regular expression and makes several strings per value; a GET page reads a
 * hundred or more of them, so the common form is read from its character codes, allocating only the Date.
 * Anything else (years before 100 or past 9999, BC, infinity, an offset with seconds) goes to pg's parser.
 * test/unit/pool-timestamps.test.ts checks the two agree on generated values.
 */

/** pg's own timestamptz parser (what parseTimestamptz must agree with). */
export const pgParseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (v: string) => Date;

const ZERO = 48; // '0'
const NINE = 57;
const HYPHEN = 45;
const PLUS = 43;
const SPACE = 32;
const COLON = 58;
const DOT = 46;
/** "YYYY-MM-DD HH:MM:SS+HH" is the shortest form read here. */
const SHORTEST = 22;
/** Where the seconds end: a fraction or the offset starts here. */
const AFTER_SECONDS = 19;
/** An offset as "+HH" or "+HH:MM", counting its sign. */
const HOURS_OFFSET = 3;
const MINUTES_OFFSET = 6;
const MS_PLACES = [100, 10, 1];

/** The number written by n digits at `at`, or NaN. */
function digits(v: string, at: number, n: number): number {
  let x = 0;
  for (let i = at; i < at + n; i++) {
    const d = v.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return NaN;
    x = x * 10 + d;
  }
  return x;
}

export function parseTimestamptz(v: string): Date {
  const year = digits(v, 0, 4);
  // Date.UTC reads years below 100 as 19xx: those go to pg's parser.
  if (year >= 100 && v.length >= SHORTEST && v.charCodeAt(4) === HYPHEN && v.charCodeAt(10) === SPACE) {
    let i = AFTER_SECONDS;
    let ms = 0;
    if (v.charCodeAt(i) === DOT) {
      // Milliseconds are the fraction's first three digits (PostgreSQL sends up to six).
      const start = ++i;
      for (; i < v.length && v.charCodeAt(i) >= ZERO && v.charCodeAt(i) <= NINE; i++) {
        if (i - start < 3) ms += (v.charCodeAt(i) - ZERO) * MS_PLACES[i - start]!;
      }
    }
    const sign = v.charCodeAt(i);
    const rest = v.length - i;
    const offsetForm = rest === HOURS_OFFSET || (rest === MINUTES_OFFSET && v.charCodeAt(i + 3) === COLON);
    if ((sign === PLUS || sign === HYPHEN) && offsetForm) {
      const offsetMinutes = digits(v, i + 1, 2) * 60 + (rest === MINUTES_OFFSET ? digits(v, i + 4, 2) : 0);
      const t = Date.UTC(
        year,
        digits(v, 5, 2) - 1,
        digits(v, 8, 2),
        digits(v, 11, 2),
        digits(v, 14, 2),
        digits(v, 17, 2),
        ms,
      );
      if (!Number.isNaN(t)) return new Date(t - (sign === HYPHEN ? -1 : 1) * offsetMinutes * 60_000);
    }
  }
  return pgParseTimestamptz(v);
}
