import { isRefusal } from '../errors';
import { Router, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import * as episodes from '../episodes/service';
import * as queue from '../queue/service';
import { PageError } from './errors';
import { duration, when } from './format';
import { formField } from './session';
import { render } from './views';

// Up next and favourites on the web page (docs/web.md): the buttons on every episode, the Up next page
// (reordered with buttons that work without script, dragged with it), the Favourites page.

/** An episode shown in a list: what the buttons need to know of it. */
type Shown = { id: string; enclosureUrl: string | null };

/** Which of the shown episodes (by item id) are favourites and which are in Up next. */
export async function marksOf(ctx: ApiContext, userId: number, shown: Shown[]) {
  const withAudio = shown.filter((e): e is Shown & { enclosureUrl: string } => e.enclosureUrl !== null);
  const [favs, q] = await Promise.all([
    episodes.favouritesAmong(
      ctx.db,
      userId,
      withAudio.map((e) => episodes.syncIdOf(e.enclosureUrl)),
    ),
    queue.read(ctx.db, userId),
  ]);
  const queued = new Set(q.items.map((i) => i.itemId));
  return {
    favourite: new Set(withAudio.filter((e) => favs.has(episodes.syncIdOf(e.enclosureUrl))).map((e) => e.id)),
    queued: new Set(shown.filter((e) => queued.has(e.id)).map((e) => e.id)),
    queue: q.items,
  };
}

/**
 * What the player goes on to when an episode ends: the item after it in Up next, else (an episode not on
 * the list) the first; only episodes a feed lists (the player needs their page).
 */
export function nextInQueue(items: queue.QueueItem[], itemId: string): queue.QueueItem | undefined {
  const playable = items.filter((i) => i.itemId !== null);
  const at = playable.findIndex((i) => i.itemId === itemId);
  return at === -1 ? playable[0] : playable[at + 1];
}

/** The lock screen's "previous": the item before the episode in Up next, if it is on the list and not first. */
export function previousInQueue(items: queue.QueueItem[], itemId: string): queue.QueueItem | undefined {
  const playable = items.filter((i) => i.itemId !== null);
  const at = playable.findIndex((i) => i.itemId === itemId);
  return at > 0 ? playable[at - 1] : undefined;
}

/** Back to where a form was posted from (a page of the web page's episodes, Up next or Favourites). */
const backTo = (req: Request, fallback: string): string => {
  const back = formField(req, 'back');
  return back &&
    /^\/web\/(subscriptions(\/[^/]+\/episodes)?|episodes\/\d+|in-progress|queue|favourites)(\?|$)/.test(back)
    ? back
    : fallback;
};

/** An item id of the list from the path. */
function itemId(req: Request): string {
  const id = String(req.params.id);
  if (!/^[1-9]\d{0,17}$/.test(id)) throw new PageError(404, 'There is no such episode in Up next.');
  return id;
}

/** The feed episode of the path, as the queue and the favourites name it. */
async function named(ctx: ApiContext, req: Request) {
  const e = await episodes.episode(ctx.db, currentUser(req), String(req.params.id));
  if (e.enclosureUrl === null) throw new PageError(400, 'The feed gives no audio for this episode.');
  return { podcastUrl: e.feedUrl, enclosureUrl: e.enclosureUrl, episodeGuid: e.guid };
}

/** A domain refusal (a full list, an episode that cannot be named) as the page's 400. */
async function refusing<T>(work: Promise<T>): Promise<T> {
  return work.catch((err: unknown) => {
    const reason = (err as { reason?: unknown }).reason;
    throw typeof reason === 'string' ? new PageError(400, reason) : err;
  });
}

/** Sets or clears a favourite now; what cannot be named or passes the bound is the page's 400. */
async function setFavourite(ctx: ApiContext, req: Request, episode: episodes.EpisodeIdentity, value: boolean) {
  const userId = currentUser(req);
  const [e] = await episodes.resolveEpisodes(ctx.db, userId, [episode]);
  if (e === undefined || isRefusal(e)) throw new PageError(400, e?.reason ?? 'No such episode');
  const [refused] = await episodes.changeFavourites(
    ctx.db,
    userId,
    [{ episode: e, value, at: new Date(), index: 0 }],
    ctx.config.favouritesMax,
  );
  if (refused) throw new PageError(400, refused.reason);
}

function queuePage(ctx: ApiContext) {
  return async (req: Request, res: Response) => {
    const q = await queue.read(ctx.db, currentUser(req));
    render(res, 'queue', {
      title: 'Up next',
      section: 'queue',
      items: q.items,
      back: '/web/queue',
      scripts: ['/static/queue.js'],
      when,
      duration,
    });
  };
}

export function queueRoutes(ctx: ApiContext): Router {
  const r = Router();
  const limits = { maxItems: ctx.config.queueMaxItems };
  route(r, '/web/queue', { get: queuePage(ctx) });
  route(r, '/web/queue/clear', {
    post: async (req, res) => {
      await queue.clear(ctx.db, currentUser(req));
      res.redirect(303, '/web/queue');
    },
  });
  route(r, '/web/queue/:id/move', {
    post: async (req, res) => {
      const at = Number(formField(req, 'at'));
      if (!Number.isInteger(at) || at < 0) throw new PageError(400, 'at: a position, 0 the top');
      await queue.move(ctx.db, currentUser(req), itemId(req), at);
      // A drag posts with fetch and reloads the page itself.
      if (formField(req, 'script') === '1') return void res.status(204).end();
      res.redirect(303, backTo(req, '/web/queue'));
    },
  });
  route(r, '/web/queue/:id/remove', {
    post: async (req, res) => {
      await queue.remove(ctx.db, currentUser(req), [itemId(req)]);
      res.redirect(303, backTo(req, '/web/queue'));
    },
  });
  // The answer to "take its episodes off Up next too?" when a subscription is removed.
  route(r, '/web/queue/remove', {
    post: async (req, res) => {
      const ids = (formField(req, 'ids') ?? '').split(',').filter((id) => /^[1-9]\d{0,17}$/.test(id));
      if (ids.length > 0) await queue.remove(ctx.db, currentUser(req), ids).catch(() => undefined);
      res.redirect(303, backTo(req, '/web/subscriptions'));
    },
  });
  route(r, '/web/episodes/:id/queue', {
    post: async (req, res) => {
      const place = formField(req, 'at') === 'next' ? 'next' : 'end';
      await refusing(queue.add(ctx.db, currentUser(req), await named(ctx, req), place, limits));
      res.redirect(303, backTo(req, '/web/queue'));
    },
  });
  route(r, '/web/episodes/:id/favourite', {
    post: async (req, res) => {
      await setFavourite(ctx, req, await named(ctx, req), formField(req, 'value') !== '0');
      res.redirect(303, backTo(req, `/web/episodes/${String(req.params.id)}`));
    },
  });
  // Clearing from the Favourites page, where an episode may be one no feed lists any more.
  route(r, '/web/favourites/clear', {
    post: async (req, res) => {
      const podcastUrl = formField(req, 'podcast_url') ?? '';
      const enclosureUrl = formField(req, 'enclosure_url') ?? '';
      await setFavourite(ctx, req, { podcastUrl, enclosureUrl }, false);
      res.redirect(303, '/web/favourites');
    },
  });
  route(r, '/web/favourites', {
    get: async (req, res) => {
      const list = await episodes.listFavourites(ctx.db, currentUser(req), ctx.config.favouritesMax);
      render(res, 'favourites', {
        title: 'Favourites',
        section: 'favourites',
        favourites: list,
        back: '/web/favourites',
        when,
        duration,
      });
    },
  });
  return r;
}
