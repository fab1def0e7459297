import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { PageError } from '../errors';
import { idOf } from './item';

/** Ending one of one's sessions (a browser, a gpodder app, a /v1 login), from the account page. */
export function sessionRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/sessions/:id/revoke', {
    post: async (req, res) => {
      if (!(await auth.revokeSession(ctx, currentUser(req), idOf(req)))) {
        throw new PageError(404, 'There is no such session of yours.');
      }
      res.redirect(303, '/web/account');
    },
  });
}
