import { Router, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { route } from '../http/method';
import { when } from './format';
import { adminOnly, formField } from './session';
import { render, type Notice } from './views';

/** Administrators' pages: the users of the server, created, removed, given a new password. */
export function adminRoutes(ctx: ApiContext): Router {
  const r = Router();
  const usersPage = async (_req: Request, res: Response, notices: Notice[] = []) => {
    render(res, 'admin-users', { title: 'Users', users: await auth.listUsers(ctx.db), notices, when });
  };
  /** Runs an administrator's action; a refused input is shown on the page. */
  const act = async (req: Request, res: Response, action: () => Promise<string>) => {
    let done: string;
    try {
      done = await action();
    } catch (err) {
      if (!(err instanceof auth.AuthInputError)) throw err;
      res.status(400);
      return usersPage(req, res, [{ kind: 'error', text: err.message }]);
    }
    await usersPage(req, res, [{ kind: 'ok', text: done }]);
  };
  const name = (req: Request) => String(req.params.name);

  route(
    r,
    '/web/admin/users',
    {
      get: (req, res) => usersPage(req, res),
      post: (req, res) =>
        act(req, res, async () => {
          const username = (formField(req, 'username') ?? '').trim();
          const admin = formField(req, 'admin') === 'on';
          await auth.addUser(ctx, username, formField(req, 'password') ?? '', { admin });
          return `User ${username} created${admin ? ' (administrator)' : ''}.`;
        }),
    },
    [adminOnly],
  );
  route(
    r,
    '/web/admin/users/:name/password',
    {
      post: (req, res) =>
        act(req, res, async () => {
          await auth.setPassword(ctx, name(req), formField(req, 'password') ?? '');
          return `Password of ${name(req)} changed; their /v1 logins ended.`;
        }),
    },
    [adminOnly],
  );
  route(
    r,
    '/web/admin/users/:name/remove',
    {
      post: (req, res) =>
        act(req, res, async () => {
          if (name(req) === res.locals.account!.username) throw new auth.AuthInputError('You cannot remove yourself.');
          await auth.removeUser(ctx, name(req));
          return `User ${name(req)} and all of their data removed.`;
        }),
    },
    [adminOnly],
  );
  return r;
}
