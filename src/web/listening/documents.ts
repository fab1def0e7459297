import * as episodes from '../../episodes/service';
import * as feeds from '../../feeds/service';
import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';

/**
 * The episode's chapters and transcript as castsync keeps them (JSON for follow-along.js), fetched from
 * where the feed says on the first request: only for a subscriber, like the episode's page.
 */
export function documentRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/episodes/:id/chapters', {
    get: async (req, res) => {
      const episode = await episodes.episode(ctx.db, currentUser(req), String(req.params.id));
      res.set('Cache-Control', 'private, no-cache').json(await feeds.chaptersOf(ctx, episode.id));
    },
  });
  route(r, '/web/episodes/:id/transcript', {
    get: async (req, res) => {
      const episode = await episodes.episode(ctx.db, currentUser(req), String(req.params.id));
      res.set('Cache-Control', 'private, no-cache').json(await feeds.transcriptOf(ctx, episode.id));
    },
  });
}
