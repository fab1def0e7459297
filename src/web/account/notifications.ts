import type { Router } from 'express';
import * as auth from '../../auth/service';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as notifications from '../../notifications/service';
import { again } from '../errors';
import { formField } from '../session';
import type { AccountPage } from './page';

/**
 * New-episode notifications on the account page: all on or off, the URL (ntfy or a webhook), "Send a
 * test"; and this browser's Web Push subscription, which the page's script sends (notify.js).
 */
export function notificationRoutes(r: Router, ctx: ApiContext, accountPage: AccountPage): void {
  const settings = () => notifications.deliverySettings(ctx.config);
  route(r, '/web/account/notifications', {
    post: [
      again((req, res, notice) => accountPage(req, res, [notice])),
      async (req, res) => {
        const url = (formField(req, 'url') ?? '').trim();
        const kind = formField(req, 'kind') === 'ntfy' ? 'ntfy' : 'webhook';
        const enabled = formField(req, 'enabled') === 'on';
        await notifications.setNotificationSettings(
          ctx.db,
          currentUser(req),
          { enabled, url: url === '' ? null : url, kind },
          settings().policy,
        );
        await accountPage(req, res, [{ kind: 'ok', text: 'Your notification settings were saved.' }]);
      },
    ],
  });
  route(r, '/web/account/notifications/test', {
    post: async (req, res) => {
      const sent = await notifications.sendTest(ctx.db, currentUser(req), settings());
      const said =
        sent.status === undefined ? sent.answer : `HTTP ${sent.status}${sent.answer ? `: ${sent.answer}` : ''}`;
      await accountPage(req, res, [
        {
          kind: sent.ok ? 'ok' : 'error',
          text: `${sent.ok ? 'The test was taken' : 'The test was not taken'}. ${said}`,
        },
      ]);
    },
  });
  // The page's script posts this browser's push subscription (PushSubscription.toJSON()'s fields).
  route(r, '/web/account/browsers', {
    post: async (req, res) => {
      const endpoint = formField(req, 'endpoint') ?? '';
      const keys = { p256dh: formField(req, 'p256dh') ?? '', auth: formField(req, 'auth') ?? '' };
      // Kept with this session, which signing out of ends (src/web/router/sign-in.ts).
      const session = (await auth.browserSessionId(ctx.db, res.locals.session!)) ?? null;
      await notifications.addBrowser(ctx.db, currentUser(req), { endpoint, keys }, settings().policy, session);
      res.status(204).end();
    },
  });
  route(r, '/web/account/browsers/remove', {
    post: async (req, res) => {
      await notifications.removeBrowser(ctx.db, currentUser(req), formField(req, 'endpoint') ?? '');
      res.status(204).end();
    },
  });
}
