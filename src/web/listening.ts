import { Router, type Request } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import * as listening from '../episodes/listening';
import * as documents from '../feeds/documents';
import * as subscriptions from '../subscriptions/service';
import { parseTimestamp } from '../timestamps';
import { PageError } from './errors';
import { duration, when } from './format';
import { marksOf, nextInQueue, previousInQueue } from './queue/marks';
import { formField } from './session';
import { guidOf } from './subscriptions';
import { render } from './views';

const PER_PAGE = 50;

/** A whole number of seconds from a form field; undefined when absent or empty, refused when not one. */
function seconds(req: Request, name: string): number | undefined {
  const v = formField(req, name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,9}$/.test(v)) throw new PageError(400, `${name}: a whole number of seconds`);
  return Number(v);
}

/** Back to where a form was posted from (a path of the web page's episodes only). */
const backTo = (req: Request, fallback: string): string => {
  const back = formField(req, 'back');
  return back && /^\/web\/(subscriptions\/[^/]+\/episodes|episodes\/\d+|in-progress)(\?|$)/.test(back)
    ? back
    : fallback;
};

/**
 * Listening on the web page: a feed's episodes with the user's progress, what to continue, and an episode's
 * page with a player that writes the position back as an episode action (docs/web.md).
 */
export function listeningRoutes(ctx: ApiContext): Router {
  const r = Router();
  route(r, '/web/subscriptions/:guid/episodes', {
    get: async (req, res) => {
      const record = await subscriptions.getRecord(ctx.db, currentUser(req), guidOf(req));
      const q = typeof req.query.q === 'string' ? req.query.q.slice(0, 200) : '';
      const page = Math.max(1, Math.min(1000, Number.parseInt(String(req.query.page ?? '1'), 10) || 1));
      const found = await listening.feedEpisodes(ctx.db, currentUser(req), record.feedUrl, {
        search: q,
        page,
        perPage: PER_PAGE,
      });
      const base = `/web/subscriptions/${record.guid}/episodes`;
      render(res, 'episodes', {
        title: found.episodes[0]?.podcastTitle ?? record.feedUrl,
        section: 'subscriptions',
        record,
        q,
        page,
        pages: Math.max(1, Math.ceil(found.total / PER_PAGE)),
        total: found.total,
        episodes: found.episodes,
        marks: await marksOf(ctx, currentUser(req), found.episodes),
        pageHref: (n: number) => `${base}?${new URLSearchParams({ q, page: String(n) })}`,
        back: req.originalUrl,
        when,
        duration,
      });
    },
  });
  route(r, '/web/in-progress', {
    get: async (req, res) => {
      const episodes = await listening.inProgress(ctx.db, currentUser(req));
      const marks = await marksOf(ctx, currentUser(req), episodes);
      render(res, 'in-progress', {
        title: 'Continue listening',
        episodes,
        marks,
        back: req.originalUrl,
        when,
        duration,
      });
    },
  });
  route(r, '/web/episodes/:id', {
    get: async (req, res) => {
      const episode = await listening.episode(ctx.db, currentUser(req), String(req.params.id));
      const settings = await listening.playerSettings(ctx.db, currentUser(req));
      const marks = await marksOf(ctx, currentUser(req), [episode]);
      render(res, 'episode', {
        title: episode.title ?? episode.enclosureUrl ?? 'Episode',
        // A feed's episode: the player is a page of the subscriptions, whichever page led to it.
        section: 'subscriptions',
        episode,
        marks,
        next: nextInQueue(marks.queue, episode.id),
        previous: previousInQueue(marks.queue, episode.id),
        speeds: listening.SPEEDS,
        speed: await listening.speedFor(ctx.db, currentUser(req), episode, settings.speed),
        skips: settings,
        declared: await documents.declaredOf(ctx, episode.id),
        back: req.originalUrl,
        // queue.js: Up next's dragging, when that page is shown in place.
        scripts: ['/static/player.js', '/static/keep-playing.js', '/static/follow-along.js', '/static/queue.js'],
        when,
        duration,
      });
    },
  });
  // The episode's chapters and transcript as castsync keeps them (JSON for follow-along.js), fetched from
  // where the feed says on the first request: only for a subscriber, like the episode's page.
  route(r, '/web/episodes/:id/chapters', {
    get: async (req, res) => {
      const episode = await listening.episode(ctx.db, currentUser(req), String(req.params.id));
      res.set('Cache-Control', 'private, no-cache').json(await documents.chaptersOf(ctx, episode.id));
    },
  });
  route(r, '/web/episodes/:id/transcript', {
    get: async (req, res) => {
      const episode = await listening.episode(ctx.db, currentUser(req), String(req.params.id));
      res.set('Cache-Control', 'private, no-cache').json(await documents.transcriptOf(ctx, episode.id));
    },
  });
  // The player's writes (fetch, or sendBeacon when the page is left): 204, nothing to show.
  route(r, '/web/episodes/:id/position', {
    post: async (req, res) => {
      const position = seconds(req, 'position');
      if (position === undefined) throw new PageError(400, 'position: a whole number of seconds');
      const total = seconds(req, 'total');
      const sentAt = formField(req, 'at');
      const when = sentAt ? parseTimestamp(sentAt) : undefined;
      if (sentAt && !when) throw new PageError(400, 'at: an ISO 8601 time with its zone');
      await listening.savePosition(ctx.db, currentUser(req), String(req.params.id), {
        started: seconds(req, 'started'),
        position,
        total: total === 0 ? undefined : total,
        when,
      });
      res.status(204).end();
    },
  });
  // The player's speed for the podcast (fetch from player.js): 204.
  route(r, '/web/episodes/:id/speed', {
    post: async (req, res) => {
      const speed = Number(formField(req, 'speed'));
      await listening.setSpeed(ctx.db, currentUser(req), String(req.params.id), speed);
      res.status(204).end();
    },
  });
  route(r, '/web/episodes/:id/played', {
    post: async (req, res) => {
      const id = String(req.params.id);
      await listening.markPlayed(ctx.db, currentUser(req), id);
      res.redirect(303, backTo(req, `/web/episodes/${id}`));
    },
  });
  return r;
}
