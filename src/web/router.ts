import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import * as accounts from '../auth/accounts';
import * as auth from '../auth/service';
import { Deleted, InvalidInput, NotFound } from '../errors';
import { HttpError } from '../http/errors';
import { clientKey, type AuthLimits } from '../http/limits';
import { route } from '../http/method';
import { accountRoutes } from './account';
import { adminRoutes } from './admin';
import { flowRoutes } from './flow';
import {
  checkCsrf,
  checkPresession,
  endSession,
  formField,
  loadSession,
  PageError,
  presessionToken,
  signedIn,
  startSession,
} from './session';
import { opmlUpload, subscriptionRoutes } from './subscriptions';
import { render, STATIC_DIR } from './views';

/** Where to go after sign-in: a path of this site only (never `//host` or a URL elsewhere). */
const safeNext = (next: string | undefined): string =>
  next && /^\/(?![/\\])/.test(next) ? next : '/web/subscriptions';

/**
 * The web page for people: sign-in at `/`, everything else under `/web`, the Nextcloud approval page at
 * `/login/flow/{code}`, static files under `/static`. Server-rendered, forms only, on the services the
 * APIs use (docs/web.md).
 */
export function webRouter(ctx: ApiContext, limits: AuthLimits): Router {
  const r = Router();
  const session = loadSession(ctx);
  const forms = express.urlencoded({ extended: false, limit: '64kb' });
  const registration = ctx.config.allowRegistration;

  r.use('/static', express.static(STATIC_DIR, { index: false, maxAge: '1h' }));
  // Feed artwork comes from the feeds' own hosts; nothing else on these pages is from elsewhere.
  r.use(['/web', '/login/flow'], (_req, res, next) => {
    res.set('Content-Security-Policy', CSP);
    next();
  });
  r.use(['/web', '/login/flow'], session, forms);

  const signInPage = (req: Request, res: Response, status = 200, error?: string, username = '') => {
    res.status(status);
    render(res, 'sign-in', {
      title: 'Sign in',
      csrf: presessionToken(req, res),
      next: typeof req.query.next === 'string' ? req.query.next : (formField(req, 'next') ?? ''),
      username,
      registration,
      notices: error ? [{ kind: 'error', text: error }] : [],
    });
  };

  route(r, '/', {
    get: [
      session,
      (req, res) => {
        res.set('Content-Security-Policy', CSP);
        if (res.locals.account) return res.redirect(303, safeNext(req.query.next as string | undefined));
        signInPage(req, res);
      },
    ],
  });
  route(r, '/web/sign-in', {
    post: async (req, res) => {
      checkPresession(req);
      const username = formField(req, 'username') ?? '';
      const password = formField(req, 'password') ?? '';
      let userId: number;
      try {
        userId = await limits.login.attempt(clientKey(req, username), () =>
          accounts.checkPassword(ctx.db, username, password),
        );
      } catch (err) {
        if (!(err instanceof HttpError) || (err.status !== 401 && err.status !== 429)) throw err;
        if (err.status === 429) res.set('Retry-After', err.headers['Retry-After']!);
        const text =
          err.status === 429
            ? `Too many failed sign-ins: try again in ${err.headers['Retry-After']} seconds.`
            : 'Wrong username or password.';
        return signInPage(req, res, err.status, text, username);
      }
      const token = await accounts.openBrowserSession(ctx.db, userId, req.headers['user-agent']);
      startSession(req, res, token);
      res.redirect(303, safeNext(formField(req, 'next')));
    },
  });
  route(r, '/web/sign-out', {
    post: [
      signedIn,
      checkCsrf,
      async (req, res) => {
        await accounts.closeBrowserSession(ctx, res.locals.session!);
        endSession(req, res);
        res.redirect(303, '/');
      },
    ],
  });
  route(r, '/web/register', {
    get: (req, res) => {
      if (!registration) throw new PageError(404, 'Sign-up is closed on this server: ask its administrator.');
      render(res, 'register', { title: 'Create an account', csrf: presessionToken(req, res), username: '' });
    },
    post: async (req, res) => {
      if (!registration) throw new PageError(404, 'Sign-up is closed on this server: ask its administrator.');
      checkPresession(req);
      const username = formField(req, 'username') ?? '';
      const password = formField(req, 'password') ?? '';
      let userId: number;
      try {
        // Never an administrator: those are made with the CLI (`user add --admin`, `user admin NAME`).
        userId = await auth.addUser(ctx, username, password);
      } catch (err) {
        if (!(err instanceof auth.AuthInputError)) throw err;
        res.status(400);
        return render(res, 'register', {
          title: 'Create an account',
          csrf: presessionToken(req, res),
          username,
          notices: [{ kind: 'error', text: err.message }],
        });
      }
      startSession(req, res, await accounts.openBrowserSession(ctx.db, userId, req.headers['user-agent']));
      res.redirect(303, '/web/subscriptions');
    },
  });

  r.use('/web', signedIn);
  r.use('/web/opml', opmlUpload);
  r.use('/web', checkCsrf);
  r.use(subscriptionRoutes(ctx), accountRoutes(ctx), adminRoutes(ctx), flowRoutes(ctx));
  r.use('/web', () => {
    throw new PageError(404, 'There is no such page.');
  });
  r.use(['/web', '/login/flow'], pageErrors(ctx));
  return r;
}

const CSP = [
  "default-src 'self'",
  "img-src 'self' data: https: http:",
  "style-src 'self'",
  "script-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** Errors on a page become a page: its status and a message a person can act on; others go on. */
function pageErrors(ctx: ApiContext): ErrorRequestHandler {
  return (err: unknown, _req, res, next) => {
    const [status, message] =
      err instanceof PageError
        ? [err.status, err.message]
        : err instanceof NotFound
          ? [404, 'There is no such page, or it is not yours.']
          : err instanceof Deleted
            ? [410, 'This feed was deleted.']
            : err instanceof InvalidInput
              ? [400, err.reason]
              : err instanceof HttpError && err.status < 500
                ? [err.status, err.message]
                : [0, ''];
    if (status === 0) return next(err);
    if (status >= 500) ctx.logger.error({ err }, 'web page failed');
    res.status(status);
    render(res, 'error', { title: status === 403 ? 'Not allowed' : 'Something is wrong', message });
  };
}
