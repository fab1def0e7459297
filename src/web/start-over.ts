import { Router } from 'express';
import type { ApiContext } from '../api-context';
import * as transfer from '../transfer/service';
import { InvalidInput } from '../errors';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { again } from './errors';
import { confirmsName } from './session';
import { render } from './views';

/** "Start over": forget the user's sync state without sending removals to their apps, once confirmed. */
export function startOverRoutes(ctx: ApiContext): Router {
  const r = Router();
  const title = 'Start over';
  route(r, '/web/start-over', {
    get: (_req, res) => render(res, 'start-over', { title }),
    post: [
      again((_req, res, notice) => render(res, 'start-over', { title, notices: [notice] })),
      async (req, res) => {
        if (!confirmsName(req, res.locals.account!.username)) {
          throw new InvalidInput('Type your username exactly to confirm: nothing was changed.');
        }
        const done = await transfer.startOver(ctx.db, currentUser(req));
        render(res, 'start-over', { title, done });
      },
    ],
  });
  return r;
}
