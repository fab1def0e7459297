import type { Request, Response, Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import { route } from '../../http/method';
import { PageError } from '../errors';
import { checkPresession, formField, presessionToken, signInAs } from '../session';
import { render, type Notice } from '../views';
import type { Page } from './sign-in';

const CLOSED = 'Sign-up is closed on this server: ask its administrator.';

/** The sign-up page, when the server allows registration. */
export function registerPage(ctx: ApiContext): Page {
  return (req: Request, res: Response, notices: Notice[] = []) => {
    if (!ctx.config.allowRegistration) throw new PageError(404, CLOSED);
    const username = formField(req, 'username') ?? '';
    render(res, 'register', { title: 'Create an account', csrf: presessionToken(ctx, req, res), username, notices });
  };
}

/** Creating an account from the web page, and signing in as it. */
export function registerRoutes(r: Router, ctx: ApiContext, registerPage: Page): void {
  route(r, '/web/register', {
    get: (req, res) => registerPage(req, res),
    post: async (req, res) => {
      if (!ctx.config.allowRegistration) throw new PageError(404, CLOSED);
      checkPresession(req);
      // Never an administrator: those are made with the CLI (`user add --admin`, `user admin NAME`).
      const userId = await auth.addUser(ctx, formField(req, 'username') ?? '', formField(req, 'password') ?? '');
      await signInAs(ctx, req, res, userId);
      res.redirect(303, '/web/subscriptions');
    },
  });
}
