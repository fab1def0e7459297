import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import { currentUser } from '../../http/credentials';
import { clientKey, type AuthLimits } from '../../http/limits';
import { route } from '../../http/method';
import { again } from '../errors';
import { formField } from '../session';
import type { AccountPage } from './page';

/** Changing one's password, and signing out everywhere else if asked. */
export function passwordRoutes(r: Router, ctx: ApiContext, limits: AuthLimits, accountPage: AccountPage): void {
  route(r, '/web/account/password', {
    post: [
      again((req, res, notice) => accountPage(req, res, [notice])),
      async (req, res) => {
        const signOutElsewhere = formField(req, 'sign_out_elsewhere') === 'on';
        // Guesses of the current password count as failed sign-ins of this address and user.
        const key = clientKey(req, res.locals.account!.username);
        const change = {
          current: formField(req, 'current') ?? '',
          next: formField(req, 'new') ?? '',
          keepSession: res.locals.session!,
          signOutElsewhere,
        };
        await auth.changePassword(ctx, currentUser(req), change, (check, refused) =>
          limits.login.attempt(key, check, refused),
        );
        const text = signOutElsewhere
          ? 'Your password was changed, and you are signed out everywhere else.'
          : 'Your password was changed.';
        await accountPage(req, res, [{ kind: 'ok', text }]);
      },
    ],
  });
}
