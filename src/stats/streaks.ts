import { addDays, daysBetween } from './days';

/** A run of consecutive days with some listening. */
export type Streak = { days: number; from: string; to: string };

/** The longest run of consecutive dates (the earliest of equals), from dates in ascending order. */
export function longestStreak(dates: string[]): Streak | undefined {
  let best: Streak | undefined;
  let run: Streak | undefined;
  for (const d of dates) {
    run = run && daysBetween(run.to, d) === 1 ? { ...run, days: run.days + 1, to: d } : { days: 1, from: d, to: d };
    if (!best || run.days > best.days) best = run;
  }
  return best;
}

/** The run that reaches today, or yesterday (today may not have been listened to yet): 0 days when none. */
export function currentStreak(dates: string[], today: string): number {
  const heard = new Set(dates);
  let day = heard.has(today) ? today : addDays(today, -1);
  let days = 0;
  while (heard.has(day)) {
    days++;
    day = addDays(day, -1);
  }
  return days;
}
