import * as auth from '../../auth/service';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { ApiContext } from '../../api-context';
import { clientKey, type AuthLimits } from '../../http/limits';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as notifications from '../../notifications/service';
import { PageError } from '../errors';
import type { OidcSignIn } from '../oidc';
import {
  checkCsrf,
  checkPresession,
  endSession,
  formField,
  presessionToken,
  safeNext,
  signedIn,
  signInAs,
} from '../session';
import { render, type Notice } from '../views';
import { contentSecurity } from './static';

/** A page of the front door, shown with notices (a refused form's, for one). */
export type Page = (req: Request, res: Response, notices?: Notice[]) => unknown;

/** The sign-in page: the password form, single sign-on's button, and after signing out, a word saying so. */
export function signInPage(ctx: ApiContext, oidc: OidcSignIn | undefined): Page {
  const { allowRegistration: registration, passwordLogin } = ctx.config;
  return async (req: Request, res: Response, notices: Notice[] = []) => {
    const signedOut = req.method === 'GET' && req.query.signed_out !== undefined;
    render(res, 'sign-in', {
      title: 'Sign in',
      csrf: presessionToken(ctx, req, res),
      next: typeof req.query.next === 'string' ? req.query.next : (formField(req, 'next') ?? ''),
      username: formField(req, 'username') ?? '',
      registration,
      passwordLogin,
      oidcLabel: oidc?.label,
      endSessionUrl: signedOut ? await oidc?.endSessionUrl() : undefined,
      notices: signedOut ? [{ kind: 'ok', text: 'You are signed out of castsync.' }, ...notices] : notices,
    });
  };
}

/** The start page (sign-in, or on to where a signed-in browser was going), signing in with a password, signing out. */
export function signInRoutes(
  r: Router,
  ctx: ApiContext,
  limits: AuthLimits,
  session: RequestHandler[],
  signInPage: Page,
): void {
  route(r, '/', {
    get: [
      contentSecurity,
      ...session,
      async (req, res) => {
        if (res.locals.account) return res.redirect(303, safeNext(req.query.next as string | undefined));
        await signInPage(req, res);
      },
    ],
  });
  route(r, '/web/sign-in', {
    post: async (req, res) => {
      if (!ctx.config.passwordLogin) {
        throw new PageError(404, 'Signing in with a password is turned off on this server: use single sign-on.');
      }
      checkPresession(req);
      const username = formField(req, 'username') ?? '';
      const password = formField(req, 'password') ?? '';
      const userId = await limits.login.attempt(clientKey(req, username), () =>
        auth.checkPassword(ctx.db, username, password),
      );
      await signInAs(ctx, req, res, userId);
      res.redirect(303, safeNext(formField(req, 'next')));
    },
  });
  route(r, '/web/sign-out', {
    post: [
      signedIn,
      checkCsrf,
      async (req, res) => {
        // The browsers that turned notifications on in this session stop showing them: a shared computer
        // shows nothing of the person once they have signed out.
        const session = await auth.browserSessionId(ctx.db, res.locals.session!);
        if (session !== undefined) await notifications.removeSessionBrowsers(ctx.db, currentUser(req), session);
        await auth.closeBrowserSession(ctx, res.locals.session!);
        endSession(ctx, req, res);
        res.redirect(303, '/?signed_out');
      },
    ],
  });
}
