import { Router } from 'express';
import type { Context } from '../context';
import { Unauthorized } from '../http/errors';
import { parseBody } from '../http/validate';
import { clientKey, type AuthLimits } from './limits';
import { currentUser } from './middleware';
import { loginBody, logoutBody, refreshBody } from './schemas';
import * as auth from './service';

/** /v1/auth/login and /v1/auth/refresh: no credentials needed beyond the body. */
export function sessionRoutes(ctx: Context, limits: AuthLimits): Router {
  const r = Router();
  r.post('/auth/login', async (req, res) => {
    const { username, password } = parseBody(loginBody, req.body);
    const session = await limits.login.attempt(
      () => clientKey(req, username),
      () => auth.login(ctx, username, password),
    );
    res.json(session);
  });
  r.post('/auth/refresh', async (req, res) => {
    const { refresh_token } = parseBody(refreshBody, req.body);
    const session = await auth.refresh(ctx, refresh_token);
    if (!session) throw new Unauthorized();
    res.json(session);
  });
  return r;
}

/** /v1/auth/logout: behind authentication. */
export function logoutRoute(ctx: Context): Router {
  const r = Router();
  r.post('/auth/logout', async (req, res) => {
    const { refresh_token } = parseBody(logoutBody, req.body ?? {});
    await auth.logout(ctx, currentUser(req), refresh_token);
    res.status(204).end();
  });
  return r;
}
