import type { Queryable } from '../db/pool';
import { mostSubscribed } from './toplist-repo';

// The podcasts this server's users subscribe to most. A feed is listed only once at least `min` users
// subscribe to it (TOPLIST_MIN_SUBSCRIBERS), so that the list never tells anyone what one person listens to.

export type Popular = {
  feedUrl: string;
  subscribers: number;
  title: string | null;
  description: string | null;
  author: string | null;
  website: string | null;
  artworkUrl: string | null;
};

/** The longest toplist there is (as gpodder.net). */
export const MAX_TOPLIST = 100;
/** How long a toplist is kept before it is counted again: it reads every user's subscriptions. */
const KEEP_MS = 10 * 60 * 1000;

/** A toplist of this server, counted at most once every ten minutes per process. */
export function toplist(min: number): (db: Queryable, count: number) => Promise<Popular[]> {
  let kept: { at: number; list: Promise<Popular[]> } | undefined;
  return async (db, count) => {
    if (!kept || Date.now() - kept.at > KEEP_MS) {
      const list = mostSubscribed(db, min, MAX_TOPLIST).then((rows) =>
        rows.map((r) => ({
          feedUrl: r.feed_url,
          subscribers: r.subscribers,
          title: r.title,
          description: r.description,
          author: r.author,
          website: r.link,
          artworkUrl: r.artwork_url,
        })),
      );
      kept = { at: Date.now(), list };
      // A failed count is not kept.
      list.catch(() => (kept = undefined));
    }
    return (await kept.list).slice(0, count);
  };
}
