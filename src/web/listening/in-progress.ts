import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as listening from '../../episodes/listening';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { duration, when } from '../format';
import { marksOf } from '../queue/marks';
import { render } from '../views';

/** What to continue: the episodes begun and not finished. */
export function inProgressRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/in-progress', {
    get: async (req, res) => {
      const episodes = await listening.inProgress(ctx.db, currentUser(req));
      const marks = await marksOf(ctx, currentUser(req), episodes);
      render(res, 'in-progress', {
        title: 'Continue listening',
        episodes,
        marks,
        back: req.originalUrl,
        when,
        duration,
      });
    },
  });
}
