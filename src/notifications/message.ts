import type { EventRow } from './repo';

// What a person is told of a batch: "New episode of …" or "3 new episodes of …", the episodes' titles,
// each episode's page and enclosure, the podcast's artwork. The same message for every channel.

export type Episode = { id: string; title: string | null; page: string; enclosure: string | null };

export type Message = {
  /** The idempotency key: the batch, the person and the channel, the same at each attempt. */
  id: string;
  title: string;
  body: string;
  podcast: { title: string | null; feedUrl: string; artwork: string | null };
  episodes: Episode[];
};

/** Titles listed in a message's body; the rest are counted. */
const LISTED = 5;

/** The episode's page: under PUBLIC_URL when it is set, else the path alone (the browser resolves it). */
export const episodePage = (publicUrl: string | undefined, itemId: string): string =>
  `${publicUrl ?? ''}/web/episodes/${itemId}`;

/** The message of a batch's events (at least one). */
export function compose(id: string, events: EventRow[], publicUrl: string | undefined): Message {
  const first = events[0]!;
  const podcastName = first.podcast_title ?? first.feed_url;
  const episodes = events.map((e) => ({
    id: e.item_id,
    title: e.title,
    page: episodePage(publicUrl, e.item_id),
    enclosure: e.enclosure_url,
  }));
  const titles = episodes.slice(0, LISTED).map((e) => e.title ?? 'An episode without a title');
  if (episodes.length > LISTED) titles.push(`and ${episodes.length - LISTED} more`);
  return {
    id,
    title:
      episodes.length === 1 ? `New episode of ${podcastName}` : `${episodes.length} new episodes of ${podcastName}`,
    body: titles.join('\n'),
    podcast: { title: first.podcast_title, feedUrl: first.feed_url, artwork: first.artwork_url },
    episodes,
  };
}

/** A webhook's JSON body. */
export const webhookBody = (m: Message) => ({
  id: m.id,
  title: m.title,
  message: m.body,
  podcast: { title: m.podcast.title, feed_url: m.podcast.feedUrl, artwork: m.podcast.artwork },
  episodes: m.episodes.map((e) => ({ title: e.title, page: e.page, enclosure: e.enclosure })),
});

/** ntfy's JSON publishing (https://docs.ntfy.sh/publish/#publish-as-json): the topic in the body. */
export const ntfyBody = (m: Message, topic: string) => ({
  topic,
  title: m.title,
  message: m.body,
  ...(m.episodes[0]!.page.startsWith('http') && { click: m.episodes[0]!.page }),
  ...(m.podcast.artwork && { icon: m.podcast.artwork }),
  tags: ['headphones'],
});

/**
 * The most a push's JSON may take, in bytes. Push services refuse a message over 4,096 bytes once
 * encrypted (RFC 8291: 103 of them the encryption's own), and a refused message is sent again until it is
 * given up: five long titles (up to 1,000 characters each) would be. The rest is room to spare.
 */
export const PUSH_MAX_BYTES = 3000;

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The longest start of `text` (whole characters, then "…") with which `fits` holds; "" if none does. */
function cutToFit(text: string, fits: (cut: string) => boolean): string {
  if (fits(text)) return text;
  const chars = Array.from(text);
  let [low, high] = [0, chars.length];
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(chars.slice(0, mid).join('') + '…')) low = mid;
    else high = mid - 1;
  }
  return low === 0 ? '' : chars.slice(0, low).join('') + '…';
}

/**
 * What a browser's service worker receives (sw.js shows it): small, an episode's page to open. Within
 * PUSH_MAX_BYTES: an artwork URL of half of it or more is left out, then the titles listed are cut, then
 * the message's title.
 */
export function pushBody(m: Message) {
  const push = { title: m.title, body: m.body, icon: m.podcast.artwork, url: m.episodes[0]!.page, tag: m.id };
  const fits = (p: typeof push) => bytesOf(p) <= PUSH_MAX_BYTES;
  // An artwork URL of half the room or more is left out: the words matter more.
  if (push.icon !== null && Buffer.byteLength(push.icon) >= PUSH_MAX_BYTES / 2) push.icon = null;
  push.body = cutToFit(push.body, (body) => fits({ ...push, body }));
  push.title = cutToFit(push.title, (title) => fits({ ...push, title }));
  return push;
}

/** The message a "Send a test" sends. */
export const testMessage = (publicUrl: string | undefined): Message => ({
  id: `test-${Date.now()}`,
  title: 'A test from castsync',
  body: 'Notifications of new episodes will look like this.',
  podcast: { title: 'castsync', feedUrl: `${publicUrl ?? ''}/web/subscriptions`, artwork: null },
  episodes: [{ id: '0', title: 'A test', page: `${publicUrl ?? ''}/web/subscriptions`, enclosure: null }],
});
