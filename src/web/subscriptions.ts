import { Router, type Request, type Response } from 'express';
import multer from 'multer';
import type { ApiContext } from '../api-context';
import * as deletions from '../deletions/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import * as notifications from '../notifications/service';
import { exportOpml, importOpml } from '../opml/service';
import * as queue from '../queue/service';
import * as subscriptions from '../subscriptions/service';
import { parseGuid } from '../subscriptions/service';
import { again, PageError, uploadParser } from './errors';
import { formField } from './session';
import { render, type Notice } from './views';

const PER_PAGE = 50;
const STATES = { subscribed: true, unsubscribed: false, all: null } as const;
type State = keyof typeof STATES;

/** An OPML upload: one file of at most 4 MiB, kept in memory (as the API's OPML body). */
const opmlFile = uploadParser(
  multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: 4 * 1024 * 1024, files: 1 },
  }).single('opml'),
);

/** Artwork is shown only from an http(s) URL. */
const artwork = (url: string | null): string | null => (url && /^https?:\/\//i.test(url) ? url : null);

/** Back to the list as the user left it (a path of the list only). */
const backTo = (req: Request): string => {
  const back = formField(req, 'back');
  return back && back.startsWith('/web/subscriptions') ? back : '/web/subscriptions';
};

async function listPage(ctx: ApiContext, req: Request, res: Response, notices: Notice[] = [], feedUrl = '') {
  const q = typeof req.query.q === 'string' ? req.query.q.slice(0, 200) : '';
  const state: State =
    typeof req.query.state === 'string' && req.query.state in STATES ? (req.query.state as State) : 'subscribed';
  const page = Math.max(1, Math.min(1_000_000, Number.parseInt(String(req.query.page ?? '1'), 10) || 1));
  const found = await subscriptions.browse(ctx.db, currentUser(req), {
    text: q,
    subscribed: STATES[state],
    page,
    perPage: PER_PAGE,
  });
  const pageHref = (n: number) => `/web/subscriptions?${new URLSearchParams({ q, state, page: String(n) })}`;
  render(res, 'subscriptions', {
    title: 'Subscriptions',
    notices,
    feedUrl,
    q,
    state,
    page,
    pages: Math.max(1, Math.ceil(found.total / PER_PAGE)),
    total: found.total,
    records: found.records.map((r) => ({ ...r, artworkUrl: artwork(r.artworkUrl) })),
    notificationsOff: await notifications.feedsOff(
      ctx.db,
      currentUser(req),
      found.records.map((r) => r.feedUrl),
    ),
    pageHref,
    back: req.originalUrl,
  });
}

/** The body parser of the OPML form (ahead of the form token check, which needs the body): a refused upload,
 * too large as well, shows the list again with the reason. */
export const opmlUpload = (ctx: ApiContext) => [
  again((req, res, notice) => listPage(ctx, req, res, [notice])),
  opmlFile,
];

/** A feed's new-episode notifications, on or off (docs/notifications.md), from the list or the feed's page. */
function feedNotificationRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/subscriptions/:guid/notifications', {
    post: async (req, res) => {
      await notifications.setFeedNotifications(ctx.db, currentUser(req), guidOf(req), formField(req, 'on') === '1');
      res.redirect(303, backTo(req));
    },
  });
}

/** The list, with its search, filter and pages; adding a feed; unsubscribing, resubscribing, deleting; OPML. */
export function subscriptionRoutes(ctx: ApiContext): Router {
  const r = Router();
  route(r, '/web/subscriptions', {
    get: (req, res) => listPage(ctx, req, res),
    post: async (req, res) => {
      const url = (formField(req, 'feed_url') ?? '').trim();
      const done = await subscriptions.subscribe(ctx.db, currentUser(req), [{ url }]);
      const outcome = done.outcomes[0]!;
      // The same words as the API's per-item failures.
      if (!outcome.ok) {
        res.status(400);
        return listPage(ctx, req, res, [{ kind: 'error', text: `${url || '(empty)'}: ${outcome.reason}` }], url);
      }
      await listPage(ctx, req, res, [{ kind: 'ok', text: `Subscribed to ${outcome.url}` }]);
    },
  });
  for (const [action, subscribed] of [
    ['unsubscribe', false],
    ['resubscribe', true],
  ] as const) {
    route(r, `/web/subscriptions/:guid/${action}`, {
      post: async (req, res) => {
        const record = await subscriptions.getRecord(ctx.db, currentUser(req), guidOf(req));
        await subscriptions.change(ctx.db, currentUser(req), guidOf(req), { subscribed });
        if (subscribed) return void res.redirect(303, backTo(req));
        await askAboutQueue(ctx, req, res, record, 'unsubscribed from');
      },
    });
  }
  feedNotificationRoutes(r, ctx);
  route(r, '/web/subscriptions/:guid/delete', {
    post: async (req, res) => {
      const record = await subscriptions.getRecord(ctx.db, currentUser(req), guidOf(req));
      await deletions.requestDeletion(ctx.db, currentUser(req), guidOf(req));
      await askAboutQueue(ctx, req, res, record, 'removed');
    },
  });
  route(r, '/web/opml', {
    get: async (req, res) => {
      res
        .type('text/x-opml; charset=utf-8')
        .attachment('castsync-subscriptions.opml')
        .send(await exportOpml(ctx.db, currentUser(req)));
    },
    post: async (req, res) => {
      if (!req.file) throw new PageError(400, 'Choose an OPML file to import.');
      const parts = await importOpml(ctx.db, currentUser(req), req.file.buffer.toString('utf8'));
      const outcomes = parts.flatMap((p) => p.outcomes);
      const failed = outcomes.filter((o) => !o.ok);
      const notices: Notice[] = [
        { kind: 'ok', text: `Imported ${outcomes.length - failed.length} of ${outcomes.length} feeds.` },
        ...failed.slice(0, 20).map((o) => ({ kind: 'error' as const, text: `${o.url}: ${o.ok ? '' : o.reason}` })),
      ];
      await listPage(ctx, req, res, notices);
    },
  });
  return r;
}

/**
 * After a feed is removed or unsubscribed: when episodes of it are in Up next, a page asks whether they go
 * too (they stay unless the person says so); otherwise back to the list.
 */
async function askAboutQueue(
  ctx: ApiContext,
  req: Request,
  res: Response,
  record: { feedUrl: string },
  done: string,
): Promise<void> {
  const ids = await queue.itemsOfPodcast(ctx.db, currentUser(req), [record.feedUrl]);
  if (ids.length === 0) return void res.redirect(303, backTo(req));
  render(res, 'queue-keep', {
    title: 'Keep its episodes in Up next?',
    section: 'subscriptions',
    record,
    done,
    ids,
    back: backTo(req),
  });
}

export function guidOf(req: Request): string {
  const guid = parseGuid(String(req.params.guid));
  if (guid === undefined) throw new PageError(404, 'There is no such feed in your list.');
  return guid;
}
