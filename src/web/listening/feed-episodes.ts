import * as episodes from '../../episodes/service';
import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as notifications from '../../notifications/service';
import * as subscriptions from '../../subscriptions/service';
import { duration, when } from '../format';
import { marksOf } from '../queue/marks';
import { guidOf } from '../subscriptions';
import { render } from '../views';

const PER_PAGE = 50;

/** A feed's episodes with the user's progress, searched and paged. */
export function feedEpisodeRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/subscriptions/:guid/episodes', {
    get: async (req, res) => {
      const record = await subscriptions.getRecord(ctx.db, currentUser(req), guidOf(req));
      const q = typeof req.query.q === 'string' ? req.query.q.slice(0, 200) : '';
      const page = Math.max(1, Math.min(1000, Number.parseInt(String(req.query.page ?? '1'), 10) || 1));
      const found = await episodes.feedEpisodes(ctx.db, currentUser(req), record.feedUrl, {
        search: q,
        page,
        perPage: PER_PAGE,
      });
      const base = `/web/subscriptions/${record.guid}/episodes`;
      render(res, 'episodes', {
        title: found.episodes[0]?.podcastTitle ?? record.feedUrl,
        section: 'subscriptions',
        record,
        q,
        page,
        pages: Math.max(1, Math.ceil(found.total / PER_PAGE)),
        total: found.total,
        episodes: found.episodes,
        marks: await marksOf(ctx, currentUser(req), found.episodes),
        pageHref: (n: number) => `${base}?${new URLSearchParams({ q, page: String(n) })}`,
        back: req.originalUrl,
        notificationsOff: (await notifications.feedsOff(ctx.db, currentUser(req), [record.feedUrl])).size > 0,
        when,
        duration,
      });
    },
  });
}
