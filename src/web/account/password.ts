import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { again } from '../errors';
import { formField } from '../session';
import type { AccountPage } from './page';

/** Changing one's password, and signing out everywhere else if asked. */
export function passwordRoutes(r: Router, ctx: ApiContext, accountPage: AccountPage): void {
  route(r, '/web/account/password', {
    post: [
      again((req, res, notice) => accountPage(req, res, [notice])),
      async (req, res) => {
        const signOutElsewhere = formField(req, 'sign_out_elsewhere') === 'on';
        await auth.changePassword(ctx, currentUser(req), {
          current: formField(req, 'current') ?? '',
          next: formField(req, 'new') ?? '',
          keepSession: res.locals.session!,
          signOutElsewhere,
        });
        const text = signOutElsewhere
          ? 'Your password was changed, and you are signed out everywhere else.'
          : 'Your password was changed.';
        await accountPage(req, res, [{ kind: 'ok', text }]);
      },
    ],
  });
}
