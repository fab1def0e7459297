import type { Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import { podcastGuid } from '../subscriptions/service';
import { isDate } from './days';
import * as repo from './repo';
import { credit } from './spans';

// Listening statistics: what the user heard, from the play actions of all their devices (docs/stats.md).
// Computed on read: a user with 20,000 plays costs one statement and a pass over them (bench: stats).

export type PodcastFigure = {
  podcastUrl: string;
  podcastGuid: string;
  title: string | null;
  seconds: number;
};
export type DeviceFigure = { device: string | null; seconds: number };
export type DayFigure = { date: string; seconds: number };

export type Summary = {
  timeZone: string;
  /** Today in the user's time zone. */
  today: string;
  listenedSeconds: number;
  episodesFinished: number;
  /** Most listened first. */
  byPodcast: PodcastFigure[];
  byDevice: DeviceFigure[];
  /** The days with listening, in order. */
  byDay: DayFigure[];
};

/** A range of local dates, both included; open ends take in all of the history. */
export type Range = { from?: string; to?: string };

/** Adds `n` to the figure kept under `key`. */
function add<K>(totals: Map<K, number>, key: K, n: number): void {
  totals.set(key, (totals.get(key) ?? 0) + n);
}

const byMost = <T extends { seconds: number }>(a: T, b: T) => b.seconds - a.seconds;

/** The user's listening in a range of dates of their time zone. */
export async function summary(db: Queryable, userId: number, range: Range = {}): Promise<Summary> {
  for (const [name, date] of Object.entries(range)) {
    if (date !== undefined && !isDate(date)) throw new InvalidInput(`Invalid ${name}: expected a date YYYY-MM-DD`);
  }
  if (range.from && range.to && range.from > range.to) throw new InvalidInput('Invalid range: from is after to');
  const { time_zone: timeZone, today } = await repo.zone(db, userId);
  // Every play up to the range's end: a second heard before the range is not heard anew in it.
  const plays = await repo.plays(db, userId, timeZone, range.to);
  const inRange = (day: string) => (!range.from || day >= range.from) && (!range.to || day <= range.to);
  const { credits, finishes } = credit(plays);

  const days = new Map<string, number>();
  const podcasts = new Map<string, number>();
  const devices = new Map<string | null, number>();
  let listenedSeconds = 0;
  for (const c of credits) {
    if (!inRange(c.day)) continue;
    listenedSeconds += c.seconds;
    add(days, c.day, c.seconds);
    add(podcasts, c.podcast, c.seconds);
    add(devices, c.device, c.seconds);
  }
  return {
    timeZone,
    today,
    listenedSeconds,
    episodesFinished: finishes.filter((f) => inRange(f.day)).length,
    byPodcast: (await podcastFigures(db, userId, podcasts)).sort(byMost),
    byDevice: [...devices].map(([device, seconds]) => ({ device, seconds })).sort(byMost),
    byDay: [...days].map(([date, seconds]) => ({ date, seconds })).sort((a, b) => (a.date < b.date ? -1 : 1)),
  };
}

/**
 * The podcasts' figures with their URL, guid and title: one a podcast, its plays under every URL of the
 * user's record of it added up (a feed that moved, records merged).
 */
async function podcastFigures(db: Queryable, userId: number, seconds: Map<string, number>): Promise<PodcastFigure[]> {
  const figures = new Map<string, PodcastFigure>();
  for (const p of await repo.podcasts(db, userId, [...seconds.keys()])) {
    const key = p.record ?? p.podcast_hash;
    const heard = seconds.get(p.podcast_hash)!;
    const figure = figures.get(key);
    if (figure) {
      figure.seconds += heard;
      figure.title ??= p.title;
    } else {
      figures.set(key, {
        podcastUrl: p.podcast_url,
        podcastGuid: p.guid ?? podcastGuid(p.podcast_url),
        title: p.title,
        seconds: heard,
      });
    }
  }
  return [...figures.values()];
}

/** The user's time zone: UTC unless they chose another. */
export async function timeZone(db: Queryable, userId: number): Promise<string> {
  return (await repo.zone(db, userId)).time_zone;
}

/** The time zones a user may choose. */
export const timeZones = (db: Queryable): Promise<string[]> => repo.zoneNames(db);

export async function setTimeZone(db: Queryable, userId: number, name: string): Promise<void> {
  if (!(await repo.knownZone(db, name))) throw new InvalidInput(`Unknown time zone: ${name.slice(0, 64)}`);
  await repo.setZone(db, userId, name);
}
