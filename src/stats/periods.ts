import { datesFrom, monthOf, weekOf, yearOf } from './days';
import type { DayFigure } from './summary';

export type Period = 'day' | 'week' | 'month' | 'year';

/** The start of the period a date falls in: the date, its week's Monday, YYYY-MM, or YYYY. */
const keyOf: Record<Period, (date: string) => string> = {
  day: (d) => d,
  week: weekOf,
  month: monthOf,
  year: yearOf,
};

/** Seconds per period for the dates from `from` to `to`, every period present (0 when silent), in order. */
export function totalsBy(period: Period, days: DayFigure[], from: string, to: string): DayFigure[] {
  const totals = new Map<string, number>();
  for (const d of datesFrom(from, to)) totals.set(keyOf[period](d), 0);
  for (const d of days) {
    const k = keyOf[period](d.date);
    if (totals.has(k)) totals.set(k, totals.get(k)! + d.seconds);
  }
  return [...totals].map(([date, seconds]) => ({ date, seconds }));
}
