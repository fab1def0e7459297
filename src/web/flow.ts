import { Router } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { PageError } from './errors';
import { checkCsrf, signedIn } from './session';
import { render } from './views';

const expired = () =>
  new PageError(
    404,
    'This sign-in request is unknown, already answered, or expired (after 20 minutes): start again in the app.',
  );

/**
 * The page a Nextcloud-mode app opens (login flow v2): the user signs in if need be, and allows the app.
 * The app's next poll then receives a new app password.
 */
export function flowRoutes(ctx: ApiContext): Router {
  const r = Router();
  route(
    r,
    '/login/flow/:code',
    {
      get: async (req, res) => {
        const app = await auth.pendingLoginFlow(ctx.db, String(req.params.code));
        if (app === undefined) throw expired();
        render(res, 'approve', { title: `Allow ${app} to access your account?`, app, action: req.originalUrl });
      },
      post: [
        checkCsrf,
        async (req, res) => {
          const code = String(req.params.code);
          const app = await auth.pendingLoginFlow(ctx.db, code);
          if (app === undefined || !(await auth.approveLoginFlow(ctx.db, code, currentUser(req)))) throw expired();
          render(res, 'approve', { title: `${app} is allowed in`, app, done: true });
        },
      ],
    },
    [signedIn],
  );
  return r;
}
