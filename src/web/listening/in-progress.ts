import * as episodes from '../../episodes/service';
import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { duration, when } from '../format';
import { marksOf } from '../queue/marks';
import { render } from '../views';

/** What to continue: the episodes begun and not finished. */
export function inProgressRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/in-progress', {
    get: async (req, res) => {
      const resumed = await episodes.inProgress(ctx.db, currentUser(req));
      const marks = await marksOf(ctx, currentUser(req), resumed);
      render(res, 'in-progress', {
        title: 'Continue listening',
        episodes: resumed,
        marks,
        back: req.originalUrl,
        when,
        duration,
      });
    },
  });
}
