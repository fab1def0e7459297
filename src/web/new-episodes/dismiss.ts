import * as episodes from '../../episodes/service';
import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { formField } from '../session';

/** Dismiss, on each of New episodes: the episode leaves the page (the web page's only), back to the page it was on. */
export function dismissRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/new/:id/dismiss', {
    post: async (req, res) => {
      await episodes.dismiss(ctx.db, currentUser(req), String(req.params.id));
      const back = formField(req, 'back');
      res.redirect(303, back && /^\/web\/new(\?page=\d{1,4})?$/.test(back) ? back : '/web/new');
    },
  });
}
