import type { Queryable } from '../db/pool';
import { NotFound } from '../errors';
import * as dismissals from './dismissal-repo';
import { episodesOf, type Episode } from './listening';
import * as repo from './state-repo';

// New episodes (docs/web.md): the newest episodes of every feed the user has a record of, less those
// played (the one rule, through the one reader) and those the user dismissed on the web page.

/** New episodes are those published in the last 30 days. */
export const NEW_DAYS = 30;

/**
 * A page of New episodes: `perPage` of the items of the last NEW_DAYS days not dismissed, newest first,
 * then those the one reader says are played are left out (so a page may show fewer). `total`: the items
 * the pages are counted in, played ones among them.
 */
export async function newEpisodes(
  db: Queryable,
  userId: number,
  query: { page: number; perPage: number },
  now = new Date(),
): Promise<{ episodes: Episode[]; total: number }> {
  const { rows, total } = await repo.newItems(db, userId, {
    since: new Date(now.getTime() - NEW_DAYS * 86_400_000),
    limit: query.perPage,
    offset: (query.page - 1) * query.perPage,
  });
  const shown = await episodesOf(db, userId, rows);
  return { episodes: shown.filter((e) => !e.played), total };
}

/** Takes the episode (an item id of a feed the user has a record of) off their New episodes; NotFound otherwise. */
export async function dismiss(db: Queryable, userId: number, id: string): Promise<void> {
  if (!/^\d{1,18}$/.test(id) || !(await dismissals.dismiss(db, userId, id))) throw new NotFound();
}
