import { Router, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import * as devices from '../devices/service';
import * as episodes from '../episodes/service';
import * as subscriptions from '../subscriptions/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import * as stats from '../stats/service';
import { duration, when } from './format';
import { again, PageError } from './errors';
import { formField } from './session';
import { render, type Notice } from './views';

const idOf = (req: Request): number => {
  const id = Number(req.params.id);
  if (!Number.isSafeInteger(id) || id <= 0) throw new PageError(404, 'There is no such item.');
  return id;
};

/** Where the feed fetcher read what it changed, in words. */
const sourceOf = (source: string): string =>
  ({
    redirect: "the feed's address answers with a permanent redirect (301 or 308)",
    'itunes:new-feed-url': 'the feed declares itunes:new-feed-url',
    'podcast:newFeedUrl': 'the feed declares podcast:newFeedUrl',
    'podcast:guid': 'the feed declares podcast:guid',
  })[source] ?? source;

/** The user's own pages: account (password, sessions), app passwords, devices, recent plays. */
export function accountRoutes(ctx: ApiContext): Router {
  const r = Router();

  const accountPage = async (req: Request, res: Response, notices: Notice[] = []) => {
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
      when,
    });
  };
  route(r, '/web/account', { get: (req, res) => accountPage(req, res) });
  route(r, '/web/account/password', {
    post: [
      again((req, res, notice) => accountPage(req, res, [notice])),
      async (req, res) => {
        const signOutElsewhere = formField(req, 'sign_out_elsewhere') === 'on';
        await auth.changePassword(ctx, currentUser(req), {
          current: formField(req, 'current') ?? '',
          next: formField(req, 'new') ?? '',
          keepSession: res.locals.session!,
          signOutElsewhere,
        });
        const text = signOutElsewhere
          ? 'Your password was changed, and you are signed out everywhere else.'
          : 'Your password was changed.';
        await accountPage(req, res, [{ kind: 'ok', text }]);
      },
    ],
  });
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
  route(r, '/web/sessions/:id/revoke', {
    post: async (req, res) => {
      if (!(await auth.revokeSession(ctx, currentUser(req), idOf(req)))) {
        throw new PageError(404, 'There is no such session of yours.');
      }
      res.redirect(303, '/web/account');
    },
  });

  const passwordsPage = async (req: Request, res: Response, extra: Record<string, unknown> = {}) => {
    const passwords = await auth.listAppPasswords(ctx.db, currentUser(req));
    render(res, 'app-passwords', { title: 'App passwords', passwords, when, created: '', ...extra });
  };
  route(r, '/web/app-passwords', {
    get: (req, res) => passwordsPage(req, res),
    post: async (req, res) => {
      const label = (formField(req, 'label') ?? '').trim();
      if (label === '') {
        res.status(400);
        return passwordsPage(req, res, { notices: [{ kind: 'error', text: 'Give the app password a label.' }] });
      }
      const created = await auth.createAppPassword(ctx.db, currentUser(req), label);
      await passwordsPage(req, res, { created, createdLabel: label });
    },
  });
  route(r, '/web/app-passwords/:id/revoke', {
    post: async (req, res) => {
      if (!(await auth.revokeAppPassword(ctx, currentUser(req), idOf(req)))) {
        throw new PageError(404, 'There is no such app password of yours.');
      }
      res.redirect(303, '/web/app-passwords');
    },
  });

  route(r, '/web/devices', {
    get: async (req, res) => {
      const userId = currentUser(req);
      const [known, recent] = await Promise.all([devices.list(ctx.db, userId), devices.recentReports(ctx.db, userId)]);
      render(res, 'devices', { title: 'Devices', sources: sourcesOf(known, recent), when, sentText });
    },
  });
  const activityPage = async (req: Request, res: Response, notices: Notice[] = []) => {
    const userId = currentUser(req);
    const [plays, feedChanges] = await Promise.all([
      episodes.recentPlays(ctx.db, userId, 50),
      subscriptions.feedChanges(ctx.db, userId, 50),
    ]);
    render(res, 'activity', { title: 'Activity', notices, plays, feedChanges, sourceOf, when, duration });
  };
  route(r, '/web/activity', { get: (req, res) => activityPage(req, res) });
  route(r, '/web/feed-changes/:id/undo', {
    post: [
      again((req, res, notice) => activityPage(req, res, [notice])),
      async (req, res) => {
        await subscriptions.undoFeedMove(ctx.db, currentUser(req), idOf(req));
        await activityPage(req, res, [
          {
            kind: 'ok',
            text: 'The move was undone: the subscription is at its old URL again, and your apps are told.',
          },
        ]);
      },
    ],
  });
  return r;
}

/** A device (or an app that names none) with its recent uploads, newest first, as the Devices page shows it. */
type Source = {
  key: string;
  name: string;
  device: devices.Device | undefined;
  client: string;
  reports: devices.SyncReport[];
  problems: number;
};

/** Every device, then the apps that name no device by their User-Agent; their reports with them. */
function sourcesOf(known: devices.Device[], recent: devices.SyncReport[]): Source[] {
  const sources = new Map<string, Source>();
  known.forEach((d, i) => {
    sources.set(`d:${d.id}`, {
      key: `device-${i}`,
      name: d.caption || d.id,
      device: d,
      client: '',
      reports: [],
      problems: 0,
    });
  });
  for (const r of recent) {
    const k = r.device !== undefined ? `d:${r.device}` : `c:${r.client}`;
    let s = sources.get(k);
    if (!s) {
      const name = r.device ?? (r.client ? `Nextcloud-mode app: ${r.client}` : 'Nextcloud-mode app');
      s = { key: `source-${sources.size}`, name, device: undefined, client: '', reports: [], problems: 0 };
      sources.set(k, s);
    }
    s.client ||= r.client;
    s.reports.push(r);
    s.problems += r.skipped.length;
  }
  return [...sources.values()];
}

/** What an upload sent, in words. */
function sentText(r: devices.SyncReport): string {
  const n = (k: string) => r.sent[k] ?? 0;
  return r.kind === 'subscriptions'
    ? `uploaded subscriptions: ${n('add')} added, ${n('remove')} removed`
    : `uploaded ${n('actions')} episode action${n('actions') === 1 ? '' : 's'}`;
}
