import type { Router, RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import { route } from '../../http/method';
import type { Documenter } from '../../http/openapi';
import { setSessionCookie } from '../auth';
import { authErrors, byUser, empty, gpodderPath } from '../docs';

/** Logging in and out: the session cookie of gpodder.net's clients. */
export function loginRoutes(r: Router, ctx: ApiContext, user: RequestHandler): void {
  route(
    r,
    '/api/2/auth/:user/login.json',
    {
      post: (_req, res) => {
        // The authentication before this gave the client a session cookie if it had no valid one.
        res.status(200).end();
      },
    },
    [user],
  );
  route(
    r,
    '/api/2/auth/:user/logout.json',
    {
      post: async (req, res) => {
        if (res.locals.session) await auth.closeSession(ctx, res.locals.session);
        setSessionCookie(req, res, '');
        res.status(200).end();
      },
    },
    [user],
  );
}

export const documentLogin: Documenter = (r) => {
  const path = gpodderPath(r);
  path('post', '/api/2/auth/{user}/login.json', 'Log in: sets the sessionid cookie', {
    request: byUser,
    responses: { 200: empty, ...authErrors },
  });
  path('post', '/api/2/auth/{user}/logout.json', 'Log out: ends the session of the cookie', {
    request: byUser,
    responses: { 200: empty, ...authErrors },
  });
};
