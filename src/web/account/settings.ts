import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as auth from '../../auth/service';
import * as episodes from '../../episodes/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as stats from '../../stats/service';
import { again } from '../errors';
import { formField } from '../session';
import type { AccountPage } from './page';

/** The time zone (for the statistics), the player's skip lengths and speed, and the page's colours. */
export function settingsRoutes(r: Router, ctx: ApiContext, accountPage: AccountPage): void {
  route(r, '/web/account/time-zone', {
    post: [
      again((req, res, notice) => accountPage(req, res, [notice])),
      async (req, res) => {
        await stats.setTimeZone(ctx.db, currentUser(req), formField(req, 'time_zone') ?? '');
        await accountPage(req, res, [{ kind: 'ok', text: 'Your time zone was saved.' }]);
      },
    ],
  });
  route(r, '/web/account/player', {
    post: [
      again((req, res, notice) => accountPage(req, res, [notice])),
      async (req, res) => {
        const [back, forward] = [Number(formField(req, 'skip_back')), Number(formField(req, 'skip_forward'))];
        // A form without the speed (as the page had before it) keeps the speed there is.
        const speed = formField(req, 'speed');
        await episodes.setPlayerSettings(ctx.db, currentUser(req), {
          back,
          forward,
          speed: speed === undefined ? (await episodes.playerSettings(ctx.db, currentUser(req))).speed : Number(speed),
        });
        await accountPage(req, res, [{ kind: 'ok', text: 'Your player settings were saved.' }]);
      },
    ],
  });
  route(r, '/web/account/theme', {
    post: [
      again((req, res, notice) => accountPage(req, res, [notice])),
      async (req, res) => {
        await auth.setTheme(ctx.db, currentUser(req), formField(req, 'theme') ?? '');
        // The page shown next is already in the new colours: the layout reads them from the account.
        res.locals.account = await auth.account(ctx.db, currentUser(req));
        await accountPage(req, res, [{ kind: 'ok', text: 'Your colours were saved.' }]);
      },
    ],
  });
}
