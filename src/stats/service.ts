// The stats service, one seam for every door and the rooms above: what they may call, by name.
// A user's listening summary and time zone (summary.ts), and the calendar arithmetic the pages draw it with:
// days (days.ts), totals by period (periods.ts), streaks (streaks.ts). The files behind it import each other,
// never this one; the spans and the repo stay inside the room.
export { addDays, isDate, weekOf } from './days';
export { totalsBy } from './periods';
export type { Period } from './periods';
export { currentStreak, longestStreak } from './streaks';
export type { Streak } from './streaks';
export { setTimeZone, summary, timeZone, timeZones } from './summary';
export type { DayFigure, DeviceFigure, PodcastFigure, Range, Summary } from './summary';
