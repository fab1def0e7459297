import { Router, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { InvalidInput } from '../errors';
import { route } from '../http/method';
import { when } from './format';
import { again } from './errors';
import { adminOnly, confirmsName, formField } from './session';
import { render, type Notice } from './views';

const nameOf = (req: Request) => String(req.params.name);
type Act = (req: Request, res: Response, action: () => Promise<string>) => Promise<void>;

/** Administrators' pages: the users of the server, created, removed, given a new password. */
export function adminRoutes(ctx: ApiContext): Router {
  const r = Router();
  // With single sign-on, a user may be made without a password: they sign in with the provider or proxy.
  const sso = ctx.config.oidcIssuer !== undefined || ctx.config.trustedAuthHeader !== undefined;
  const usersPage = async (_req: Request, res: Response, notices: Notice[] = []) => {
    render(res, 'admin-users', { title: 'Users', users: await auth.listUsers(ctx.db), notices, when, sso });
  };
  /** Runs an administrator's action and says what it did (a refused input is shown on the same page). */
  const act: Act = async (req, res, action) => {
    await usersPage(req, res, [{ kind: 'ok', text: await action() }]);
  };
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
          const own = nameOf(req) === res.locals.account!.username;
          await auth.setPassword(ctx, nameOf(req), formField(req, 'password') ?? '', {
            revokeAppPasswords,
            keepSession: own ? res.locals.session : undefined,
          });
          const ended = own ? 'your other sessions ended' : 'all of their sessions ended';
          return `Password of ${nameOf(req)} changed; ${ended}${revokeAppPasswords ? ', and the app passwords were revoked' : ' (app passwords stay)'}.`;
        }),
    },
    [adminOnly, showAgain],
  );
  removeRoute(r, ctx, act);
  return r;
}

/** Removing a user: nothing undoes it, so it is confirmed on a page of its own, by typing the username. */
function removeRoute(r: Router, ctx: ApiContext, act: Act): void {
  const page = (req: Request, res: Response, notices: Notice[] = []) =>
    render(res, 'admin-remove', { title: `Remove ${nameOf(req)}`, section: 'admin-users', name: nameOf(req), notices });
  route(
    r,
    '/web/admin/users/:name/remove',
    {
      get: (req, res) => page(req, res),
      post: [
        again((req, res, notice) => page(req, res, [notice])),
        (req, res) =>
          act(req, res, async () => {
            if (nameOf(req) === res.locals.account!.username) throw new InvalidInput('You cannot remove yourself.');
            if (!confirmsName(req, nameOf(req))) {
              throw new InvalidInput('Type the username exactly to confirm: nothing was changed.');
            }
            await auth.removeUser(ctx, nameOf(req));
            return `User ${nameOf(req)} and all of their data removed.`;
          }),
      ],
    },
    [adminOnly],
  );
}
