import express, { Router } from 'express';
import type { ApiContext } from '../../api-context';
import type { AuthLimits } from '../../http/limits';
import { storableInput } from '../../http/text-edge';
import { accountRoutes } from '../account';
import { adminRoutes } from '../admin';
import { appRoutes } from '../apps';
import { artworkRoutes } from '../artwork';
import { duplicateRoutes } from '../duplicates';
import { again, inputRefused, PageError, pageErrors } from '../errors';
import { flowRoutes } from '../flow';
import { listeningRoutes } from '../listening';
import { archiveUpload, movingRoutes } from '../moving';
import { newEpisodeRoutes } from '../new-episodes';
import { oidcSignIn } from '../oidc';
import { queueRoutes } from '../queue';
import { searchRoutes } from '../search';
import { checkCsrf, loadSession, signedIn } from '../session';
import { startOverRoutes } from '../start-over';
import { statsRoutes } from '../stats';
import { opmlUpload, subscriptionRoutes } from '../subscriptions';
import { trustedProxySignIn } from '../trusted-proxy';
import { registerPage, registerRoutes } from './register';
import { signInPage, signInRoutes } from './sign-in';
import { staticRoutes } from './static';

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
  const signIn = signInPage(ctx, oidc);
  const register = registerPage(ctx);

  staticRoutes(r);
  // A refused form is shown again with what went wrong (set ahead of the body parser: a form too large too).
  r.use(
    '/web/sign-in',
    again((req, res, notice) => signIn(req, res, [notice])),
  );
  r.use(
    '/web/register',
    again((req, res, notice) => register(req, res, [notice])),
  );
  r.use(['/web', '/login/flow'], ...session, forms, storableInput(inputRefused, { body: true }));
  signInRoutes(r, ctx, limits, session, signIn);
  registerRoutes(r, ctx, register);

  if (oidc) r.use(oidc.routes);
  signedInRoutes(r, ctx, limits);
  r.use(pageErrors(ctx.logger));
  return r;
}

/** The pages and forms of a signed-in browser, the forms checked against cross-site requests; else a 404. */
function signedInRoutes(r: Router, ctx: ApiContext, limits: AuthLimits): void {
  r.use('/web', signedIn);
  r.use('/web/opml', opmlUpload(ctx));
  r.use('/web/import/archive', archiveUpload(ctx));
  r.use('/web/import/gpodder-archive', archiveUpload(ctx));
  r.use('/web', checkCsrf);
  r.use(
    subscriptionRoutes(ctx),
    duplicateRoutes(ctx),
    accountRoutes(ctx, limits),
    startOverRoutes(ctx),
    movingRoutes(ctx),
    appRoutes(ctx),
    adminRoutes(ctx),
    flowRoutes(ctx),
    listeningRoutes(ctx),
    newEpisodeRoutes(ctx),
    queueRoutes(ctx),
    statsRoutes(ctx),
    searchRoutes(ctx),
    artworkRoutes(ctx),
  );
  r.use('/web', () => {
    throw new PageError(404, 'There is no such page.');
  });
}
