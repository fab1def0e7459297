import * as episodes from '../../episodes/service';
import type { Request, Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { formField } from '../session';

/** Back to where a form was posted from (a path of the web page's episodes only). */
const backTo = (req: Request, fallback: string): string => {
  const back = formField(req, 'back');
  return back && /^\/web\/(subscriptions\/[^/]+\/episodes|episodes\/\d+|in-progress|new)(\?|$)/.test(back)
    ? back
    : fallback;
};

/** Marking an episode played, from its page or a list. */
export function playedRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/episodes/:id/played', {
    post: async (req, res) => {
      const id = String(req.params.id);
      await episodes.markPlayed(ctx.db, currentUser(req), id);
      res.redirect(303, backTo(req, `/web/episodes/${id}`));
    },
  });
}
