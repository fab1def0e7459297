import express, { Router, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import * as accounts from '../auth/accounts';
import * as auth from '../auth/service';
import { clientKey, type AuthLimits } from '../http/limits';
import { route } from '../http/method';
import { accountRoutes } from './account';
import { duplicateRoutes } from './duplicates';
import { adminRoutes } from './admin';
import { appRoutes } from './apps';
import { again, inputRefused, PageError, pageErrors } from './errors';
import { storableInput } from '../http/text-edge';
import { flowRoutes } from './flow';
import { listeningRoutes } from './listening';
import { queueRoutes } from './queue';
import { oidcSignIn } from './oidc';
import { archiveUpload, movingRoutes } from './moving';
import {
  checkCsrf,
  checkPresession,
  endSession,
  formField,
  loadSession,
  presessionToken,
  safeNext,
  signedIn,
  signInAs,
} from './session';
import { searchRoutes } from './search';
import { startOverRoutes } from './start-over';
import { statsRoutes } from './stats';
import { trustedProxySignIn } from './trusted-proxy';
import { opmlUpload, subscriptionRoutes } from './subscriptions';
import { render, STATIC_DIR, type Notice } from './views';

/**
 * The web page for people: sign-in at `/`, everything else under `/web`, the Nextcloud approval page at
 * `/login/flow/{code}`, static files under `/static`. Server-rendered, forms only, on the services the
 * APIs use (docs/web.md).
 */
export function webRouter(ctx: ApiContext, limits: AuthLimits): Router {
  const r = Router();
  // A trusted proxy's header signs the browser in after its cookie was read (docs/sso.md).
  const session = [loadSession(ctx), ...(ctx.config.trustedAuthHeader ? [trustedProxySignIn(ctx)] : [])];
  const oidc = oidcSignIn(ctx);
  const forms = express.urlencoded({ extended: false, limit: '64kb' });
  const { allowRegistration: registration, passwordLogin } = ctx.config;

  r.use('/static', express.static(STATIC_DIR, { index: false, maxAge: '1h' }));
  // The service worker, at the root so that its scope is the whole site; never cached, so a new release's
  // worker is found at the next visit.
  route(r, '/sw.js', {
    get: (_req, res) => {
      res.set('Cache-Control', 'no-cache').type('text/javascript').sendFile('sw.js', { root: STATIC_DIR });
    },
  });
  // Feed artwork comes from the feeds' own hosts; nothing else on these pages is from elsewhere.
  r.use(['/web', '/login/flow'], (_req, res, next) => {
    res.set('Content-Security-Policy', CSP);
    next();
  });
  const signInPage = async (req: Request, res: Response, notices: Notice[] = []) => {
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
  const registerPage = (req: Request, res: Response, notices: Notice[] = []) => {
    if (!registration) throw new PageError(404, 'Sign-up is closed on this server: ask its administrator.');
    const username = formField(req, 'username') ?? '';
    render(res, 'register', { title: 'Create an account', csrf: presessionToken(ctx, req, res), username, notices });
  };
  // A refused form is shown again with what went wrong (set ahead of the body parser: a form too large too).
  r.use(
    '/web/sign-in',
    again((req, res, notice) => signInPage(req, res, [notice])),
  );
  r.use(
    '/web/register',
    again((req, res, notice) => registerPage(req, res, [notice])),
  );
  r.use(['/web', '/login/flow'], ...session, forms, storableInput(inputRefused, { body: true }));

  route(r, '/', {
    get: [
      (_req, res, next) => {
        res.set('Content-Security-Policy', CSP);
        next();
      },
      ...session,
      async (req, res) => {
        if (res.locals.account) return res.redirect(303, safeNext(req.query.next as string | undefined));
        await signInPage(req, res);
      },
    ],
  });
  route(r, '/web/sign-in', {
    post: async (req, res) => {
      if (!passwordLogin) {
        throw new PageError(404, 'Signing in with a password is turned off on this server: use single sign-on.');
      }
      checkPresession(req);
      const username = formField(req, 'username') ?? '';
      const password = formField(req, 'password') ?? '';
      const userId = await limits.login.attempt(clientKey(req, username), () =>
        accounts.checkPassword(ctx.db, username, password),
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
        await accounts.closeBrowserSession(ctx, res.locals.session!);
        endSession(ctx, req, res);
        res.redirect(303, '/?signed_out');
      },
    ],
  });
  route(r, '/web/register', {
    get: (req, res) => registerPage(req, res),
    post: async (req, res) => {
      if (!registration) throw new PageError(404, 'Sign-up is closed on this server: ask its administrator.');
      checkPresession(req);
      // Never an administrator: those are made with the CLI (`user add --admin`, `user admin NAME`).
      const userId = await auth.addUser(ctx, formField(req, 'username') ?? '', formField(req, 'password') ?? '');
      await signInAs(ctx, req, res, userId);
      res.redirect(303, '/web/subscriptions');
    },
  });

  if (oidc) r.use(oidc.routes);
  r.use('/web', signedIn);
  r.use('/web/opml', opmlUpload(ctx));
  r.use('/web/import/archive', archiveUpload(ctx));
  r.use('/web/import/gpodder-archive', archiveUpload(ctx));
  r.use('/web', checkCsrf);
  r.use(
    subscriptionRoutes(ctx),
    duplicateRoutes(ctx),
    accountRoutes(ctx),
    startOverRoutes(ctx),
    movingRoutes(ctx),
    appRoutes(ctx),
    adminRoutes(ctx),
    flowRoutes(ctx),
    listeningRoutes(ctx),
    queueRoutes(ctx),
    statsRoutes(ctx),
    searchRoutes(ctx),
  );
  r.use('/web', () => {
    throw new PageError(404, 'There is no such page.');
  });
  r.use(pageErrors(ctx.logger));
  return r;
}

const CSP = [
  "default-src 'self'",
  "img-src 'self' data: https: http:",
  // The player plays episodes from the podcasts' own hosts (castsync does not proxy media).
  "media-src 'self' https: http:",
  "style-src 'self'",
  "script-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');
