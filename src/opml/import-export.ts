import type { Db, Queryable } from '../db/pool';
import * as auth from '../auth/service';
import * as feeds from '../feeds/service';
import * as subscriptions from '../subscriptions/service';
import { buildOpml, parseOpml } from './opml';

/** The most feeds one subscribe call takes; an OPML file of more is subscribed in parts of this size. */
export const OPML_CHUNK = 1000;

/**
 * These feeds of the user's as an OPML 2.0 document, with the titles and web pages the feed fetcher found
 * for them (else the URL).
 */
export async function opmlOf(db: Queryable, userId: number, title: string, urls: string[]): Promise<string> {
  const known = await feeds.describe(db, userId, urls);
  const outlines = urls.map((url) => {
    const info = known.get(url);
    return { url, title: info?.title ?? undefined, htmlUrl: info?.link ?? undefined };
  });
  return buildOpml(title, outlines);
}

/** The user's subscribed feeds as an OPML 2.0 document. */
export async function exportOpml(db: Queryable, userId: number): Promise<string> {
  const [urls, name] = await Promise.all([subscriptions.subscribedFeeds(db, userId), auth.usernameOf(db, userId)]);
  return opmlOf(db, userId, `Subscriptions of ${name ?? ''}`, urls);
}

/**
 * Subscribes the user to every feed of an OPML document, any number of them, in parts of OPML_CHUNK
 * (each part is one subscribe call, with its own change time). Throws InvalidInput for a file that is not OPML.
 */
export async function importOpml(
  db: Db,
  userId: number,
  xml: string,
): Promise<{ changedAt: Date | undefined; outcomes: subscriptions.Outcome[] }[]> {
  const found = parseOpml(xml);
  const parts = [];
  for (let i = 0; i < found.length; i += OPML_CHUNK) {
    const chunk = found.slice(i, i + OPML_CHUNK).map((f) => ({ url: f.url }));
    parts.push(await subscriptions.subscribe(db, userId, chunk));
  }
  return parts;
}
