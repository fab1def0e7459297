const ISO =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+\- ])(\d{2}):?(\d{2}))?$/;

/**
 * Parses an ISO 8601 date-time with `Z` or an offset, seconds optional and any fraction, to whole
 * milliseconds (the precision stamps are stored at, so "strictly later" stays exact); a time outside the
 * years 1 to 9999 in UTC is refused. A space where the offset sign stands is read as `+`: an unencoded `+`
 * in a query string arrives as a space. With no zone at all it is refused, or read as UTC with
 * `zonelessIsUtc` (gpodder.net's episode actions have no zone).
 */
export function parseTimestamp(value: string, { zonelessIsUtc = false } = {}): Date | undefined {
  const m = ISO.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = '', z, sign, oh = '0', om = '0'] = m;
  if (!z && !sign && !zonelessIsUtc) return undefined;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || Number(oh) > 23 || Number(om) > 59) return undefined;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  date.setUTCFullYear(year); // Date.UTC reads years below 100 as 19xx
  if (sign) date.setTime(date.getTime() - (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000);
  return isStorable(date) ? date : undefined;
}

/**
 * Whether a time is in the years 1 to 9999 in UTC: what PostgreSQL's timestamptz, ISO 8601 without a sign
 * and the gpodder timestamps out hold. A time beyond them, stored, would fail the whole statement.
 */
export function isStorable(date: Date): boolean {
  const utcYear = date.getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999;
}

/** UTC ISO 8601 with milliseconds: 2026-11-22T10:15:30.123Z. */
export const iso = (d: Date): string => d.toISOString();
