import { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { dismissRoutes } from './dismiss';
import { pageRoutes } from './page';

// New episodes on the web page (docs/web.md): the newest episodes of every subscription, less the played
// and the dismissed, with the buttons of every episode and Dismiss. A file per page or form.

export function newEpisodeRoutes(ctx: ApiContext): Router {
  const r = Router();
  pageRoutes(r, ctx);
  dismissRoutes(r, ctx);
  return r;
}
