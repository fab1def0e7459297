import type { Request, Response, Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { PageError } from '../errors';
import { when } from '../format';
import { formField } from '../session';
import { render } from '../views';
import { idOf } from './item';

/** App passwords: the page, making one (shown once), revoking one. */
export function appPasswordRoutes(r: Router, ctx: ApiContext): void {
  const passwordsPage = async (req: Request, res: Response, extra: Record<string, unknown> = {}) => {
    const passwords = await auth.listAppPasswords(ctx.db, currentUser(req));
    render(res, 'app-passwords', { title: 'App passwords', passwords, when, created: '', ...extra });
  };
  route(r, '/web/app-passwords', {
    get: (req, res) => passwordsPage(req, res),
    post: async (req, res) => {
      const label = (formField(req, 'label') ?? '').trim();
      if (label === '') {
        res.status(400);
        return passwordsPage(req, res, { notices: [{ kind: 'error', text: 'Give the app password a label.' }] });
      }
      const created = await auth.createAppPassword(ctx.db, currentUser(req), label);
      await passwordsPage(req, res, { created, createdLabel: label });
    },
  });
  route(r, '/web/app-passwords/:id/revoke', {
    post: async (req, res) => {
      if (!(await auth.revokeAppPassword(ctx, currentUser(req), idOf(req)))) {
        throw new PageError(404, 'There is no such app password of yours.');
      }
      res.redirect(303, '/web/app-passwords');
    },
  });
}
