import * as episodes from '../../episodes/service';
import type { Request, Router } from 'express';
import type { ApiContext } from '../../api-context';
import { isRefusal } from '../../errors';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { PageError } from '../errors';
import { duration, when } from '../format';
import { formField } from '../session';
import { render } from '../views';
import { backTo, named } from './forms';

/** Sets or clears a favourite now; what cannot be named or passes the bound is the page's 400. */
async function setFavourite(ctx: ApiContext, req: Request, episode: episodes.EpisodeIdentity, value: boolean) {
  const userId = currentUser(req);
  const [e] = await episodes.resolveEpisodes(ctx.db, userId, [episode]);
  if (e === undefined || isRefusal(e)) throw new PageError(400, e?.reason ?? 'No such episode');
  const [refused] = await episodes.changeFavourites(
    ctx.db,
    userId,
    [{ episode: e, value, at: new Date(), index: 0 }],
    ctx.config.favouritesMax,
  );
  if (refused) throw new PageError(400, refused.reason);
}

/** The favourite button on every episode, and the Favourites page with its own clear button. */
export function favouriteRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/episodes/:id/favourite', {
    post: async (req, res) => {
      await setFavourite(ctx, req, await named(ctx, req), formField(req, 'value') !== '0');
      res.redirect(303, backTo(req, `/web/episodes/${String(req.params.id)}`));
    },
  });
  // Clearing from the Favourites page, where an episode may be one no feed lists any more.
  route(r, '/web/favourites/clear', {
    post: async (req, res) => {
      const podcastUrl = formField(req, 'podcast_url') ?? '';
      const enclosureUrl = formField(req, 'enclosure_url') ?? '';
      await setFavourite(ctx, req, { podcastUrl, enclosureUrl }, false);
      res.redirect(303, '/web/favourites');
    },
  });
  route(r, '/web/favourites', {
    get: async (req, res) => {
      const list = await episodes.listFavourites(ctx.db, currentUser(req), ctx.config.favouritesMax);
      render(res, 'favourites', {
        title: 'Favourites',
        section: 'favourites',
        favourites: list,
        back: '/web/favourites',
        when,
        duration,
      });
    },
  });
}
