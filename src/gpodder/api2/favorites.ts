import * as episodes from '../../episodes/service';
import type { Router, RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { json, type Documenter } from '../../http/openapi';
import { authErrors, byUser, gpodderPath } from '../docs';
import { baseUrl } from '../http';
import { favoriteList } from '../schemas';

/** The user's favourite episodes. */
export function favoriteRoutes(r: Router, ctx: ApiContext, user: RequestHandler): void {
  route(
    r,
    '/api/2/favorites/:user.json',
    {
      // As gpodder.net serves them: the episode's title and URL, its podcast's, its release, its page.
      get: async (req, res) => {
        const list = await episodes.listFavourites(ctx.db, currentUser(req), ctx.config.favouritesMax);
        const base = baseUrl(ctx, req);
        res.json(
          list.map((f) => ({
            title: f.title ?? '',
            url: f.enclosureUrl,
            podcast_title: f.podcastTitle ?? '',
            podcast_url: f.podcastUrl,
            description: '',
            website: f.link ?? '',
            mygpo_link: f.itemId === null ? '' : `${base}/web/episodes/${f.itemId}`,
            released: f.publishedAt === null ? '' : f.publishedAt.toISOString().slice(0, 19),
          })),
        );
      },
    },
    [user],
  );
}

export const documentFavorites: Documenter = (r) => {
  gpodderPath(r)('get', '/api/2/favorites/{user}.json', "The user's favourite episodes, as gpodder.net serves them", {
    request: byUser,
    responses: { 200: json(favoriteList, 'Favourite episodes, the newest set first'), ...authErrors },
  });
};
