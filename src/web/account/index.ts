import { Router } from 'express';
import type { ApiContext } from '../../api-context';
import type { AuthLimits } from '../../http/limits';
import { activityRoutes } from './activity';
import { appPasswordRoutes } from './app-passwords';
import { deviceRoutes } from './devices';
import { notificationRoutes } from './notifications';
import { accountPage, pageRoutes } from './page';
import { passwordRoutes } from './password';
import { sessionRoutes } from './sessions';
import { settingsRoutes } from './settings';

// A file per page or group of forms, each registering its routes on the router it is given; the account
// page's forms show the page again with what they did (page.ts).

/** The user's own pages: account (password, settings, sessions), app passwords, devices, recent activity. */
export function accountRoutes(ctx: ApiContext, limits: AuthLimits): Router {
  const r = Router();
  const page = accountPage(ctx);
  pageRoutes(r, page);
  passwordRoutes(r, ctx, limits, page);
  settingsRoutes(r, ctx, page);
  notificationRoutes(r, ctx, page);
  sessionRoutes(r, ctx);
  appPasswordRoutes(r, ctx);
  deviceRoutes(r, ctx);
  activityRoutes(r, ctx);
  return r;
}
