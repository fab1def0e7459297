import { Router } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { NotFound } from '../http/errors';
import type { AuthLimits } from '../http/limits';
import { route } from '../http/method';
import { api2Routes } from './api2';
import { gpodderAuth } from './auth';
import { episodeRoutes } from './episodes';
import { gpodderErrors, noStore } from './http';
import { nextcloudRoutes } from './nextcloud';
import { simpleRoutes } from './simple';

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The gpodder.net v2 API, its simple API and the Nextcloud gpoddersync dialect, at the root. */
export function gpodderRouter(ctx: ApiContext, limits: AuthLimits): Router {
  const r = Router();
  const user = gpodderAuth(ctx, limits.failedAuth);
  r.use(['/api/2', '/subscriptions', '/index.php', '/apps/gpoddersync', '/login'], noStore);
  r.use(api2Routes(ctx, user), episodeRoutes(ctx, user), simpleRoutes(ctx, user), nextcloudRoutes(ctx, user));
  // The page a Nextcloud-mode app opens for the user to allow it in. Approval in the browser comes with
  // castsync's web page; until then the server's administrator approves with the CLI.
  route(r, '/login/flow/:code', {
    get: async (req, res) => {
      const code = String(req.params.code);
      const app = await auth.pendingLoginFlow(ctx.db, code);
      if (app === undefined) throw new NotFound();
      res.type('html').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow an app - castsync</title></head>
<body><main><h1>Allow ${escapeHtml(app)} to access your account?</h1>
<p>To allow it, ask the administrator of this castsync server to run:</p>
<pre>npm run cli -- login approve ${escapeHtml(code)} YOUR-USERNAME</pre>
<p>The request expires 20 minutes after the app made it.</p></main></body></html>
`);
    },
  });
  r.use(gpodderErrors);
  return r;
}
