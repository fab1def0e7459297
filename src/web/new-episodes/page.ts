import * as episodes from '../../episodes/service';
import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { duration, when } from '../format';
import { marksOf } from '../queue/marks';
import { render } from '../views';

/** Episodes a page: 50 items of the window, less the played ones (docs/web.md). */
export const PER_PAGE = 50;

/** The New episodes page: where a signed-in person lands. */
export function pageRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/new', {
    get: async (req, res) => {
      const page = Math.max(1, Math.min(1000, Number.parseInt(String(req.query.page ?? '1'), 10) || 1));
      const found = await episodes.newEpisodes(ctx.db, currentUser(req), { page, perPage: PER_PAGE });
      render(res, 'new', {
        title: 'New episodes',
        days: episodes.NEW_DAYS,
        page,
        pages: Math.max(1, Math.ceil(found.total / PER_PAGE)),
        total: found.total,
        episodes: found.episodes,
        marks: await marksOf(ctx, currentUser(req), found.episodes),
        pageHref: (n: number) => `/web/new?page=${n}`,
        back: req.originalUrl,
        when,
        duration,
      });
    },
  });
}
