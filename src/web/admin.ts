import { Router, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { InvalidInput } from '../errors';
import { route } from '../http/method';
import { when } from './format';
import { again } from './errors';
import { adminOnly, formField } from './session';
import { render, type Notice } from './views';

/** Administrators' pages: the users of the server, created, removed, given a new password. */
export function adminRoutes(ctx: ApiContext): Router {
  const r = Router();
  // With single sign-on, a user may be made without a password: they sign in with the provider or proxy.
  const sso = ctx.config.oidcIssuer !== undefined || ctx.config.trustedAuthHeader !== undefined;
  const usersPage = async (_req: Request, res: Response, notices: Notice[] = []) => {
    render(res, 'admin-users', { title: 'Users', users: await auth.listUsers(ctx.db), notices, when, sso });
  };
  /** Runs an administrator's action and says what it did (a refused input is shown on the same page). */
  const act = async (req: Request, res: Response, action: () => Promise<string>) => {
    await usersPage(req, res, [{ kind: 'ok', text: await action() }]);
  };
  const name = (req: Request) => String(req.params.name);
  const showAgain = again((req, res, notice) => usersPage(req, res, [notice]));

  route(
    r,
    '/web/admin/users',
    {
      get: (req, res) => usersPage(req, res),
      post: (req, res) =>
        act(req, res, async () => {
          const username = (formField(req, 'username') ?? '').trim();
          const admin = formField(req, 'admin') === 'on';
          const password = formField(req, 'password') ?? '';
          await auth.addUser(ctx, username, sso && password === '' ? null : password, { admin });
          return `User ${username} created${admin ? ' (administrator)' : ''}.`;
        }),
    },
    [adminOnly, showAgain],
  );
  route(
    r,
    '/web/admin/users/:name/password',
    {
      post: (req, res) =>
        act(req, res, async () => {
          const revokeAppPasswords = formField(req, 'revoke_app_passwords') === 'on';
          // Their own password: the administrator stays signed in here, as on the Account page.
          const own = name(req) === res.locals.account!.username;
          await auth.setPassword(ctx, name(req), formField(req, 'password') ?? '', {
            revokeAppPasswords,
            keepSession: own ? res.locals.session : undefined,
          });
          const ended = own ? 'your other sessions ended' : 'all of their sessions ended';
          return `Password of ${name(req)} changed; ${ended}${revokeAppPasswords ? ', and the app passwords were revoked' : ' (app passwords stay)'}.`;
        }),
    },
    [adminOnly, showAgain],
  );
  route(
    r,
    '/web/admin/users/:name/remove',
    {
      post: (req, res) =>
        act(req, res, async () => {
          if (name(req) === res.locals.account!.username) throw new InvalidInput('You cannot remove yourself.');
          await auth.removeUser(ctx, name(req));
          return `User ${name(req)} and all of their data removed.`;
        }),
    },
    [adminOnly, showAgain],
  );
  return r;
}
