import { Router } from 'express';
import type { ApiContext } from '../api-context';
import type { AuthLimits } from '../http/limits';
import { api2Routes } from './api2';
import { gpodderAuth } from './auth';
import { directoryRoutes } from './directory';
import { episodeRoutes } from './episodes';
import { gpodderErrors, urlRefused } from './errors';
import { storableInput } from '../http/text-edge';
import { noStore } from './http';
import { nextcloudRoutes } from './nextcloud';
import { simpleRoutes } from './simple';

/** The gpodder.net v2 API, its simple API and the Nextcloud gpoddersync dialect, at the root. */
export function gpodderRouter(ctx: ApiContext, limits: AuthLimits): Router {
  const r = Router();
  const user = gpodderAuth(ctx, limits.failedAuth);
  const paths = ['/api/2', '/subscriptions', '/index.php', '/apps/gpoddersync', '/login'];
  // Kasts appends `/api/2/...` to the server address as the user typed it: `https://host/` sends `//api/2/...`.
  r.use((req, _res, next) => {
    if (req.url.startsWith('//')) req.url = req.url.replace(/^\/+/, '/');
    next();
  });
  r.use(paths, noStore, storableInput(urlRefused));
  r.use(api2Routes(ctx, user), episodeRoutes(ctx, user), simpleRoutes(ctx, user), nextcloudRoutes(ctx, user));
  r.use(directoryRoutes(ctx));
  r.use(gpodderErrors);
  return r;
}
