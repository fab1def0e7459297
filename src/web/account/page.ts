import type { Request, Response, Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import * as episodes from '../../episodes/service';
import { currentUser } from '../../http/credentials';
import * as notifications from '../../notifications/service';
import { route } from '../../http/method';
import * as stats from '../../stats/service';
import { when } from '../format';
import { render, type Notice } from '../views';

/** The account page, with what its forms want said above it. */
export type AccountPage = (req: Request, res: Response, notices?: Notice[]) => Promise<void>;

/** The account page: the password form, the time zone, the player's settings, the colours, the sessions. */
export function accountPage(ctx: ApiContext): AccountPage {
  return async (req: Request, res: Response, notices: Notice[] = []) => {
    const sessions = await auth.listSessions(ctx.db, currentUser(req));
    const current = await auth.browserSessionId(ctx.db, res.locals.session!);
    const [timeZone, timeZones] = await Promise.all([
      stats.timeZone(ctx.db, currentUser(req)),
      stats.timeZones(ctx.db),
    ]);
    render(res, 'account', {
      title: 'Account',
      notices,
      sessions,
      currentSession: current,
      passwordLogin: ctx.config.passwordLogin,
      timeZone,
      timeZones,
      player: await episodes.playerSettings(ctx.db, currentUser(req)),
      skipChoices: episodes.SKIPS,
      speeds: episodes.SPEEDS,
      themes: [
        ['system', 'Same as this device'],
        ['light', 'Light'],
        ['dark', 'Dark'],
      ] satisfies [auth.Theme, string][],
      notifications: await notifications.notificationSettings(ctx.db, currentUser(req)),
      browsers: await notifications.browserCount(ctx.db, currentUser(req)),
      vapidKey: await notifications.vapidPublicKey(ctx.db),
      dailyLimit: ctx.config.notifyDailyLimit,
      scripts: ['/static/notify.js'],
      when,
    });
  };
}

export function pageRoutes(r: Router, accountPage: AccountPage): void {
  route(r, '/web/account', { get: (req, res) => accountPage(req, res) });
}
