import { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { documentRoutes } from './documents';
import { episodeRoutes } from './episode';
import { feedEpisodeRoutes } from './feed-episodes';
import { inProgressRoutes } from './in-progress';
import { playedRoutes } from './played';
import { playerRoutes } from './player';

// A file per page or group of forms, each registering its routes on the router it is given.

/**
 * Listening on the web page: a feed's episodes with the user's progress, what to continue, and an episode's
 * page with a player that writes the position back as an episode action (docs/web.md).
 */
export function listeningRoutes(ctx: ApiContext): Router {
  const r = Router();
  feedEpisodeRoutes(r, ctx);
  inProgressRoutes(r, ctx);
  episodeRoutes(r, ctx);
  documentRoutes(r, ctx);
  playerRoutes(r, ctx);
  playedRoutes(r, ctx);
  return r;
}
