// Local dates as YYYY-MM-DD strings: the statistics count in the user's calendar, so a date is a name of a
// day, not an instant. Arithmetic goes through UTC midnight, where every day has 24 hours.

const DAY_MS = 86_400_000;

const toMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
const fromMs = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Whether this is a real calendar date written YYYY-MM-DD, in the years 1 to 9999: the calendar (and
 * PostgreSQL's) has no year 0, which JavaScript's dates would take.
 */
export function isDate(text: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}$/.test(text) &&
    !text.startsWith('0000') &&
    !Number.isNaN(toMs(text)) &&
    fromMs(toMs(text)) === text
  );
}

export const addDays = (date: string, n: number): string => fromMs(toMs(date) + n * DAY_MS);

export const daysBetween = (from: string, to: string): number => Math.round((toMs(to) - toMs(from)) / DAY_MS);

/** Every date from `from` to `to`, both included. */
export function datesFrom(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
  return out;
}

/** The Monday that starts the ISO week of a date. */
export function weekOf(date: string): string {
  const weekday = (new Date(toMs(date)).getUTCDay() + 6) % 7;
  return addDays(date, -weekday);
}

export const monthOf = (date: string): string => date.slice(0, 7);
export const yearOf = (date: string): string => date.slice(0, 4);
