import { Router } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import * as stats from '../stats/service';
import { addDays, currentStreak, isDate, longestStreak, type Period, totalsBy, weekOf } from '../stats/service';
import { barChart } from './charts';
import { PageError } from './errors';
import { render } from './views';

/** A length of time as people say it: "2 h 05 min", "12 min", "40 s". */
export function spoken(seconds: number): string {
  const [h, m] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60)];
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  return m > 0 ? `${m} min` : `${seconds} s`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const monthName = (yyyyMm: string) => `${MONTHS[Number(yyyyMm.slice(5, 7)) - 1]} ${yyyyMm.slice(0, 4)}`;

/** A chart and the table that says the same. */
function chart(id: string, title: string, period: Period, days: stats.DayFigure[], from: string, to: string) {
  const label = { day: (d: string) => d.slice(5), week: (d: string) => d.slice(5), month: monthName, year: String }[
    period
  ];
  const bars = totalsBy(period, days, from, to).map((t) => ({ label: label(t.date), value: t.seconds }));
  return {
    id,
    title,
    svg: barChart(id, title, bars, spoken, bars.length > 14 ? Math.ceil(bars.length / 10) : 1),
    rows: bars.map((b) => [b.label, spoken(b.value)]),
  };
}

/** The seconds of the days from `from` to `to`, both included. */
const sum = (days: stats.DayFigure[], from: string, to: string) =>
  days.filter((d) => d.date >= from && d.date <= to).reduce((n, d) => n + d.seconds, 0);

/** The listening statistics: an overview of all of it, and a year in review for each year (docs/stats.md). */
export function statsRoutes(ctx: ApiContext): Router {
  const r = Router();
  route(r, '/web/stats', {
    get: async (req, res) => {
      const s = await stats.summary(ctx.db, currentUser(req));
      const { today, byDay } = s;
      const monday = weekOf(today);
      const dates = byDay.map((d) => d.date);
      render(res, 'stats', {
        title: 'Statistics',
        s,
        spoken,
        periods: [
          // Up to today: an app whose clock runs fast may date a play after it (docs/stats.md).
          ['Today', sum(byDay, today, today)],
          ['This week', sum(byDay, monday, today)],
          ['This month', sum(byDay, `${today.slice(0, 7)}-01`, today)],
          ['This year', sum(byDay, `${today.slice(0, 4)}-01-01`, today)],
          ['All time', s.listenedSeconds],
        ],
        current: currentStreak(dates, today),
        longest: longestStreak(dates),
        years: [...new Set(dates.map((d) => d.slice(0, 4)))].reverse(),
        charts: [
          chart('days', 'The last 30 days', 'day', byDay, addDays(today, -29), today),
          chart('weeks', 'The last 12 weeks, by week', 'week', byDay, addDays(monday, -77), today),
          chart('months', 'The last 12 months', 'month', byDay, lastYearFrom(today), today),
        ],
      });
    },
  });
  route(r, '/web/stats/:year', {
    get: async (req, res) => {
      const year = String(req.params.year);
      const [from, to] = [`${year}-01-01`, `${year}-12-31`];
      if (!/^\d{4}$/.test(year) || !isDate(from)) throw new PageError(404, 'There is no such year.');
      const s = await stats.summary(ctx.db, currentUser(req), { from, to });
      if (s.byDay.length === 0 && s.episodesFinished === 0) {
        throw new PageError(404, `Nothing was listened to in ${year}.`);
      }
      const busiest = s.byDay.reduce<stats.DayFigure | undefined>(
        (a, b) => (!a || b.seconds > a.seconds ? b : a),
        undefined,
      );
      render(res, 'stats-year', {
        title: `${year} in review`,
        section: 'stats',
        year,
        s,
        spoken,
        busiest,
        longest: longestStreak(s.byDay.map((d) => d.date)),
        charts: [chart('months', `${year}, month by month`, 'month', s.byDay, from, to)],
      });
    },
  });
  return r;
}

/** The first day of the month 11 months before today's: twelve months with today's. */
function lastYearFrom(today: string): string {
  const [y, m] = [Number(today.slice(0, 4)), Number(today.slice(5, 7))];
  const months = y * 12 + (m - 1) - 11;
  return `${String(Math.floor(months / 12)).padStart(4, '0')}-${String((months % 12) + 1).padStart(2, '0')}-01`;
}
