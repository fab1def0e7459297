import * as episodes from '../../episodes/service';
import * as feeds from '../../feeds/service';
import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import type { Episode } from '../../episodes/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { artworkImage } from '../artwork';
import { duration, when } from '../format';
import { marksOf, nextInQueue, previousInQueue } from '../queue/marks';
import { showNotes } from '../notes';
import { render } from '../views';

/** The thumbnail of the episode's artwork, else of its podcast's, 160 px a side, and what it shows. */
function artworkOf(e: Episode): { src: string; srcset: string; alt: string } | null {
  const own = artworkImage(e.artworkUrl, 160);
  if (own) return { ...own, alt: `Artwork of ${e.title ?? 'this episode'}` };
  const podcast = artworkImage(e.podcastArtworkUrl, 160);
  return podcast && { ...podcast, alt: `Artwork of ${e.podcastTitle ?? 'the podcast'}` };
}

/** An episode's page, with the player. */
export function episodeRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/episodes/:id', {
    get: async (req, res) => {
      const episode = await episodes.episode(ctx.db, currentUser(req), String(req.params.id), { notes: true });
      const settings = await episodes.playerSettings(ctx.db, currentUser(req));
      const marks = await marksOf(ctx, currentUser(req), [episode]);
      render(res, 'episode', {
        title: episode.title ?? episode.enclosureUrl ?? 'Episode',
        // A feed's episode: the player is a page of the subscriptions, whichever page led to it.
        section: 'subscriptions',
        episode,
        marks,
        next: nextInQueue(marks.queue, episode.id),
        previous: previousInQueue(marks.queue, episode.id),
        speeds: episodes.SPEEDS,
        speed: await episodes.speedFor(ctx.db, currentUser(req), episode, settings.speed),
        skips: settings,
        declared: await feeds.declaredOf(ctx, episode.id),
        artwork: artworkOf(episode),
        notes: showNotes(episode.notes, { seek: episode.enclosureUrl !== null }),
        // Its forms come back to the page, never with `?play=1` (Play's link), which would start it again.
        back: `/web/episodes/${episode.id}`,
        // queue.js: Up next's dragging, when that page is shown in place.
        scripts: ['/static/player.js', '/static/keep-playing.js', '/static/follow-along.js', '/static/queue.js'],
        when,
        duration,
      });
    },
  });
}
